import { ok } from "../protocol/index.ts";
import { serveStreamHead, serveStreamRead } from "../streams/read-responses.ts";
import { NO_SUCH_STREAM, type StreamReader } from "../streams/stream-api.ts";
import type { RunEnv } from "./app-env.ts";
import { apiRouter, headRoute, rawRoute } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { errorResponse, unwrap } from "./respond.ts";
import { RUN_STREAM_ROUTES } from "./stream-docs.ts";
import type { Context } from "hono";

/**
 * A run's event log as a read-only Durable Streams stream in JSON mode: offsets come from seq,
 * each message is one event (the bytes a WebSocket viewer gets), closed once the run is terminal.
 */
export const runStream = apiRouter();

headRoute(runStream, RUN_STREAM_ROUTES.describe);
rawRoute(runStream, RUN_STREAM_ROUTES.read, async (c: Context<RunEnv>) => {
  const stub = runOf(c);
  // Unknown and purged runs answer as the rest of the API does: 404, or 410 with the status.
  unwrap(await stub.get());
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
