import { Hono } from "hono";
import { isFailure, WatchQuery } from "../protocol/index.ts";
import type { AppEnv } from "./app-env.ts";
import { runAccess } from "./auth.ts";
import { errorResponse, readQuery, respond } from "./respond.ts";
import { runStub } from "../objects/stubs.ts";

/** The runner and viewer WebSockets. Verdicts (401/403/404/410) are given before any upgrade. */
export const sockets = new Hono<AppEnv>();

const isUpgrade = (header: string | undefined) => header?.toLowerCase() === "websocket";

sockets.get("/:runId/runner", async (c) => {
  const access = runAccess(c, { apiKey: false, tokens: ["runner"] });
  if (access instanceof Response) return access;
  const stub = runStub(c.env, access.tenant, access.runId);
  // A plain GET is the bridge's attach preflight: the run's status, decided in one look.
  if (!isUpgrade(c.req.header("upgrade"))) return respond(await stub.runnerStatus());
  const headers = new Headers({ upgrade: "websocket", "x-socket-role": "runner" });
  return stub.fetch(new Request(c.req.url, { headers }));
});

sockets.get("/:runId/watch", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"] });
  if (access instanceof Response) return access;
  const query = readQuery(c, WatchQuery);
  if (query instanceof Response) return query;
  const stub = runStub(c.env, access.tenant, access.runId);
  if (!isUpgrade(c.req.header("upgrade"))) {
    const run = await stub.get();
    if (isFailure(run)) return respond(run);
    return errorResponse("invalid_query", "this route needs a WebSocket upgrade (Upgrade: websocket)");
  }
  const headers = new Headers({
    upgrade: "websocket",
    "x-socket-role": "viewer",
    "x-viewer-after": String(query.after),
    "x-viewer-interact": String(access.interact),
  });
  return stub.fetch(new Request(c.req.url, { headers }));
});
