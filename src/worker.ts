import type { Env } from "./env.ts";
import { referenceRoutes } from "./openapi/routes.ts";
import { agui } from "./routes/agui.ts";
import { apiRouter } from "./routes/api-route.ts";
import { approvals } from "./routes/approvals.ts";
import { attach } from "./routes/attach.ts";
import { authenticate } from "./routes/auth.ts";
import { checkpoints } from "./routes/checkpoint.ts";
import { commands } from "./routes/commands.ts";
import { events } from "./routes/events.ts";
import { fallback } from "./routes/fallback.ts";
import { devSignIn } from "./routes/dev-sign-in.ts";
import { poolSocket } from "./routes/pool-socket.ts";
import { pools } from "./routes/pools.ts";
import { unhandledResponse } from "./routes/respond.ts";
import { recovery } from "./routes/recovery.ts";
import { rerun } from "./routes/rerun.ts";
import { runStream } from "./routes/run-stream.ts";
import { runs } from "./routes/runs.ts";
import { securityHeaders } from "./routes/security-headers.ts";
import { streamFastPath } from "./routes/stream-fast-path.ts";
import { streams } from "./routes/streams.ts";
import { tokens } from "./routes/tokens.ts";
import { runNotifications, webhooks } from "./routes/webhooks.ts";
import { usage } from "./routes/usage.ts";

export { Dispatcher } from "./objects/dispatcher.ts";
export { RunObject } from "./objects/run-object.ts";
export { StreamObject } from "./objects/stream-object.ts";
export { TenantIndex } from "./objects/tenant-index.ts";
export { TenantPools } from "./objects/tenant-pools.ts";
export { WebhookObject } from "./objects/webhook-object.ts";

// Every route is declared with its documentation, so /openapi.json describes exactly what is
// mounted here. A new route is one `apiRoute(router, {method, path, access, request, responses,
// refusals}, handler)` call in the router it belongs to (src/routes/api-route.ts; runs.ts shows
// it); a new router is one `app.route` line below. test/edge/openapi/ checks it with no edit.
const app = apiRouter();
app.use("*", securityHeaders());
app.route("/v1/stream", streams);
app.route("/", devSignIn);
// Only a pool key opens the pool socket, so it comes before the API's authentication.
app.route("/v1/pools", poolSocket);
app.use("/v1/*", authenticate());
app.route("/v1/runs", attach);
app.route("/v1/runs", events);
app.route("/v1/runs", commands);
app.route("/v1/runs", approvals);
app.route("/v1/runs", recovery);
app.route("/v1/runs", checkpoints);
app.route("/v1/runs", runStream);
app.route("/v1/runs", agui);
app.route("/v1/runs", rerun);
app.route("/v1/runs", tokens);
app.route("/v1/runs", runNotifications);
app.route("/v1/runs", runs);
app.route("/v1", pools);
app.route("/v1", webhooks);
app.route("/v1/usage", usage);
app.route("/", referenceRoutes(app));
app.notFound(fallback(app));
app.onError(unhandledResponse);

export default {
  /** Stream appends and catch-up reads skip the router (src/routes/stream-fast-path.ts). */
  fetch: (request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> =>
    streamFastPath(request, env) ?? app.fetch(request, env, ctx),
  /** The app, whose routes test/edge/openapi checks against its document. */
  app,
};
