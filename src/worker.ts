import { Hono } from "hono";
import type { AppEnv } from "./routes/app-env.ts";
import { attach } from "./routes/attach.ts";
import { authenticate } from "./routes/auth.ts";
import { commands } from "./routes/commands.ts";
import { events } from "./routes/events.ts";
import { errorResponse } from "./routes/respond.ts";
import { runStream } from "./routes/run-stream.ts";
import { runs } from "./routes/runs.ts";
import { streams } from "./routes/streams.ts";

export { RunObject } from "./objects/run-object.ts";
export { StreamObject } from "./objects/stream-object.ts";
export { TenantIndex } from "./objects/tenant-index.ts";

const app = new Hono<AppEnv>();
app.route("/v1/stream", streams);
app.use("/v1/*", authenticate());
app.route("/v1/runs", attach);
app.route("/v1/runs", events);
app.route("/v1/runs", commands);
app.route("/v1/runs", runStream);
app.route("/v1/runs", runs);
app.notFound(() => errorResponse("not_found", "no such route"));
app.onError((error) => {
  console.error("unhandled", error);
  return errorResponse("internal", "internal error");
});

export default app;
