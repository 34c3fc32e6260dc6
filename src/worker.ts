import { Hono } from "hono";
import type { AppEnv } from "./routes/app-env.ts";
import { authenticate } from "./routes/auth.ts";
import { errorResponse } from "./routes/respond.ts";
import { runIo } from "./routes/run-io.ts";
import { runStream } from "./routes/run-stream.ts";
import { runs } from "./routes/runs.ts";
import { sockets } from "./routes/sockets.ts";
import { streams } from "./routes/streams.ts";

export { RunObject } from "./objects/run-object.ts";
export { StreamObject } from "./objects/stream-object.ts";
export { TenantIndex } from "./objects/tenant-index.ts";

const app = new Hono<AppEnv>();
app.route("/v1/stream", streams);
app.use("/v1/*", authenticate());
app.route("/v1/runs", sockets);
app.route("/v1/runs", runIo);
app.route("/v1/runs", runStream);
app.route("/v1/runs", runs);
app.notFound(() => errorResponse("not_found", "no such route"));
app.onError((error) => {
  console.error("unhandled", error);
  return errorResponse("internal", "internal error");
});

export default app;
