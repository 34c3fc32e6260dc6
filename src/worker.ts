import { Hono } from "hono";
import type { AppEnv } from "./routes/app-env.ts";
import { authenticate } from "./routes/auth.ts";
import { errorResponse } from "./routes/respond.ts";
import { runIo } from "./routes/run-io.ts";
import { runs } from "./routes/runs.ts";
import { sockets } from "./routes/sockets.ts";

export { RunObject } from "./objects/run-object.ts";
export { TenantIndex } from "./objects/tenant-index.ts";

const app = new Hono<AppEnv>();
app.use("/v1/*", authenticate());
app.route("/v1/runs", sockets);
app.route("/v1/runs", runIo);
app.route("/v1/runs", runs);
app.notFound(() => errorResponse("not_found", "no such route"));
app.onError((error) => {
  console.error("unhandled", error);
  return errorResponse("internal", "internal error");
});

export default app;
