import { Hono } from "hono";
import { ok } from "../protocol/index.ts";
import type { AppEnv } from "./app-env.ts";
import { runAccess } from "./auth.ts";
import { errorResponse, failureResponse } from "./respond.ts";
import { runStub } from "../objects/stubs.ts";
import { serveStreamHead, serveStreamRead } from "../streams/read-responses.ts";
import { NO_SUCH_STREAM, type StreamReader } from "../streams/stream-api.ts";

/**
 * A run's event log as a read-only Durable Streams stream in JSON mode: offsets come from seq,
 * each message is one event (the bytes a WebSocket viewer gets), closed once the run is terminal.
 */
export const runStream = new Hono<AppEnv>();

runStream.on(["GET", "HEAD"], "/:runId/stream", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"] });
  if (!access.ok) return failureResponse(access);
  const stub = runStub(c.env, access.value.tenant, access.value.runId);
  // Unknown and purged runs answer as the rest of the API does: 404, or 410 with the status.
  const run = await stub.get();
  if (!run.ok) return failureResponse(run);
  const reader: StreamReader = {
    read: (request) => stub.readLog(request),
    describe: async () => {
      const info = await stub.streamHead();
      return info ? ok(info) : NO_SUCH_STREAM;
    },
  };
  if (c.req.method === "HEAD") return serveStreamHead(reader);
  return serveStreamRead(c.env, reader, c.req.raw, new URL(c.req.url));
});

runStream.all("/:runId/stream", () => {
  const response = errorResponse("method_not_allowed", "a run's stream is read-only: use GET or HEAD");
  response.headers.set("allow", "GET, HEAD");
  return response;
});
