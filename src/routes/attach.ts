import { RunnerPreflight, RunParams, WatchQuery } from "../protocol/index.ts";
import { socketUpgradeRequest } from "../run/sockets/socket-request.ts";
import { RUN_WATCHER, RUNNER } from "./access.ts";
import { apiRoute, apiRouter, jsonResponse } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { errorResponse, respond, unwrap } from "./respond.ts";

/**
 * Attaching to a run over a WebSocket: the runner socket (a plain GET is the bridge's attach
 * preflight) and the viewers' watch socket. Verdicts (401/403/404/410) come before any upgrade;
 * the sockets themselves are served by the run's object (src/run/sockets/socket-messages.ts). Their
 * frames are in docs/PROTOCOL.md, and their JSON Schemas at /schemas/*.
 */
export const attach = apiRouter();
const tags = ["sockets"];

const isUpgrade = (header: string | undefined) => header?.toLowerCase() === "websocket";
const upgradeHeader = (required: boolean) => ({
  in: "header" as const,
  name: "Upgrade",
  required,
  schema: { type: "string" as const, enum: ["websocket"] },
  description: required ? "This route is a WebSocket" : "With it the socket opens; without it, the attach preflight",
});
const switching = { description: "The WebSocket opens" };

apiRoute(
  attach,
  {
    method: "get",
    path: "/{runId}/runner",
    tags,
    summary: "The runner WebSocket, or its attach preflight",
    description:
      "With `Upgrade: websocket` the runner socket opens (frames: /schemas/runner-frames.json). A plain GET is the attach preflight: the run's status, decided in one look.",
    access: RUNNER,
    parameters: [upgradeHeader(false)],
    request: { params: RunParams },
    responses: { 101: switching, 200: jsonResponse(RunnerPreflight, "The preflight: the run's status and epoch") },
    refusals: ["not_found", "gone"],
  },
  async (c) => {
    const stub = runOf(c);
    if (!isUpgrade(c.req.header("upgrade"))) return respond(c, await stub.runnerStatus(), 200);
    return stub.fetch(socketUpgradeRequest(c.req.url, { role: "runner", token: c.var.run.token }));
  },
);

apiRoute(
  attach,
  {
    method: "get",
    path: "/{runId}/watch",
    tags,
    summary: "The viewer WebSocket: replay from `after`, then live",
    description:
      "Frames: /schemas/viewer-frames.json. The replay comes in frames of at most READ_PAGE_MAX_BYTES; a viewer acks what it has read (`ack {seq}`) and is closed with 4008 (reconnect from your last seq) once it is VIEWER_BACKLOG_MAX_BYTES behind. Viewers whose credential allows interaction may send commands and approvals on it. A GET without `Upgrade: websocket` is 400 once the run is known to exist; a run with VIEWERS_PER_RUN_MAX viewers open answers 429.",
    access: RUN_WATCHER,
    parameters: [upgradeHeader(true)],
    request: { params: RunParams, query: WatchQuery },
    responses: { 101: switching },
    refusals: ["not_found", "gone", "too_many_viewers"],
  },
  async (c) => {
    const stub = runOf(c);
    if (!isUpgrade(c.req.header("upgrade"))) {
      unwrap(await stub.get()); // 404 and 410 first, as for an upgrade
      return errorResponse("invalid_query", "this route needs a WebSocket upgrade (Upgrade: websocket)");
    }
    const { interact, token } = c.var.run;
    const viewer = { role: "viewer", after: c.req.valid("query").after, interact, token } as const;
    return stub.fetch(socketUpgradeRequest(c.req.url, viewer));
  },
);
