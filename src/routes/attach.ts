import { Hono } from "hono";
import { WatchQuery } from "../protocol/index.ts";
import { runStub } from "../objects/stubs.ts";
import { socketUpgradeRequest } from "../run/socket-request.ts";
import type { AppEnv } from "./app-env.ts";
import { runAccess } from "./auth.ts";
import { errorResponse, failureResponse, readQuery, respond } from "./respond.ts";

/**
 * Attaching to a run over a WebSocket: the runner socket (a plain GET is the bridge's attach
 * preflight) and the viewers' watch socket. Verdicts (401/403/404/410) come before any upgrade;
 * the sockets themselves are served by the run's object (src/run/socket-messages.ts).
 */
export const attach = new Hono<AppEnv>();

const isUpgrade = (header: string | undefined) => header?.toLowerCase() === "websocket";

attach.get("/:runId/runner", async (c) => {
  const access = runAccess(c, { apiKey: false, tokens: ["runner"] });
  if (!access.ok) return failureResponse(access);
  const stub = runStub(c.env, access.value.tenant, access.value.runId);
  // A plain GET is the bridge's attach preflight: the run's status, decided in one look.
  if (!isUpgrade(c.req.header("upgrade"))) return respond(await stub.runnerStatus());
  return stub.fetch(socketUpgradeRequest(c.req.url, { role: "runner" }));
});

attach.get("/:runId/watch", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"] });
  if (!access.ok) return failureResponse(access);
  const query = readQuery(c, WatchQuery);
  if (!query.ok) return failureResponse(query);
  const stub = runStub(c.env, access.value.tenant, access.value.runId);
  if (!isUpgrade(c.req.header("upgrade"))) {
    const run = await stub.get();
    if (!run.ok) return failureResponse(run);
    return errorResponse("invalid_query", "this route needs a WebSocket upgrade (Upgrade: websocket)");
  }
  const viewer = { role: "viewer", after: query.value.after, interact: access.value.interact } as const;
  return stub.fetch(socketUpgradeRequest(c.req.url, viewer));
});
