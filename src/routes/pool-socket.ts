import { POOL_SOCKET_HEADERS } from "../objects/dispatcher.ts";
import { dispatcherStub } from "../objects/stubs.ts";
import { ConnectQuery, DEFAULT_QUEUE } from "../protocol/index.ts";
import { apiRoute, apiRouter } from "./api-route.ts";
import { POOL_KEY } from "./pool-auth.ts";
import { useQueue } from "./pool-queues.ts";
import { errorResponse, failureResponse } from "./respond.ts";

/**
 * The pool socket: a pool host dials in with its pool key and takes the runs its queue's
 * dispatcher assigns it. Mounted before the API's authentication, since only a pool key opens it
 * (and a pool key opens nothing else). Frames: docs/PROTOCOL.md, "Pools", and /schemas/pool-frames.json.
 */
export const poolSocket = apiRouter();

apiRoute(
  poolSocket,
  {
    method: "get",
    path: "/connect",
    tags: ["pools"],
    summary: "The pool host WebSocket",
    description:
      "Opens with `Upgrade: websocket` and a pool key. The host's first frame is `hello`; the edge answers `welcome`, then sends `assign` and `revoke` as it dispatches. `queue` defaults to `default`.",
    access: POOL_KEY,
    parameters: [
      {
        in: "header" as const,
        name: "Upgrade",
        required: true,
        schema: { type: "string" as const, enum: ["websocket"] },
        description: "This route is a WebSocket",
      },
    ],
    request: { query: ConnectQuery },
    responses: { 101: { description: "The WebSocket opens" } },
    refusals: ["invalid_query"],
  },
  async (c) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
      return errorResponse("invalid_query", "this route needs a WebSocket upgrade (Upgrade: websocket)");
    }
    const { tenant, keyId } = c.var.pool;
    const queue = c.req.valid("query").queue ?? DEFAULT_QUEUE;
    const used = await useQueue(c.env, tenant, queue, "query");
    if (!used.ok) return failureResponse(used);
    const headers = new Headers({ upgrade: "websocket" });
    headers.set(POOL_SOCKET_HEADERS.tenant, tenant);
    headers.set(POOL_SOCKET_HEADERS.queue, queue);
    headers.set(POOL_SOCKET_HEADERS.keyId, keyId);
    return dispatcherStub(c.env, tenant, queue).fetch(new Request(c.req.url, { headers }));
  },
);
