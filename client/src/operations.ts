/**
 * Which SDK call serves each operation of the OpenAPI document (`METHOD path`), and the few
 * operations that are no SDK call, with why. test/client/operations.test.ts checks the served
 * document against both, so a new route without a call fails there.
 */
export const OPERATIONS = {
  "POST /v1/runs": "createRun",
  "GET /v1/runs": "listRuns",
  "GET /v1/runs/{runId}": "getRun",
  "DELETE /v1/runs/{runId}": "purgeRun",
  "POST /v1/runs/{runId}/rerun": "rerun",
  "GET /v1/runs/{runId}/reruns": "reruns",
  "GET /v1/runs/{runId}/events": "events",
  "GET /v1/runs/{runId}/watch": "watch",
  "POST /v1/runs/{runId}/commands": "command",
  "POST /v1/runs/{runId}/approvals/{requestId}": "approve",
  "GET /v1/runs/{runId}/approvals/{requestId}": "getApproval",
  "POST /v1/runs/{runId}/cancel": "cancel",
  "POST /v1/runs/{runId}/recover": "recover",
  "GET /v1/runs/{runId}/recovery": "recovery",
  "PUT /v1/runs/{runId}/checkpoint": "putCheckpoint",
  "GET /v1/runs/{runId}/checkpoint": "getCheckpoint",
  "POST /v1/runs/{runId}/tokens": "mintToken",
  "DELETE /v1/runs/{runId}/tokens": "revokeTokens",
  "DELETE /v1/runs/{runId}/tokens/{tokenId}": "revokeToken",
  "GET /v1/runs/{runId}/notifications": "notifications",
  "GET /v1/runs/{runId}/stream": "runStream",
  "HEAD /v1/runs/{runId}/stream": "runStream",
  "GET /v1/runs/{runId}/agui": "agui",
  "POST /v1/pool-keys": "mintPoolKey",
  "GET /v1/pool-keys": "poolKeys",
  "DELETE /v1/pool-keys/{keyId}": "revokePoolKey",
  "GET /v1/pools": "pools",
  "GET /v1/queues": "queues",
  "GET /v1/queues/{queue}": "queue",
  "PUT /v1/queues/{queue}": "setQueue",
  "POST /v1/webhooks": "createWebhook",
  "GET /v1/webhooks": "webhooks",
  "DELETE /v1/webhooks/{webhookId}": "deleteWebhook",
  "GET /v1/webhooks/{webhookId}/deliveries": "deliveries",
  "POST /v1/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver": "redeliver",
  "POST /v1/webhooks/{webhookId}/ping": "pingWebhook",
  "GET /v1/usage": "usage",
  "GET /openapi.json": "openapi",
  "GET /schemas/runner-frames.json": "frameSchema",
  "GET /schemas/viewer-frames.json": "frameSchema",
  "GET /schemas/pool-frames.json": "frameSchema",
} as const;

const DURABLE_STREAMS = "generic Durable Streams: any Durable Streams client speaks them (docs/STREAMS.md)";

export const NOT_CALLS: Record<string, string> = {
  "GET /v1/runs/{runId}/runner": "the runner socket: runner-bridge's own protocol (docs/PROTOCOL.md)",
  "GET /v1/pools/connect": "the pool host socket: runner-bridge's own protocol",
  "POST /v1/runs/{runId}/agui": "the same stream as GET, for AG-UI's HttpAgent (which POSTs); the SDK's agui() GETs it",
  "GET /v1/dev/sign-in": "the console's browser sign-in in dev mode",
  "GET /docs": "the API reference page (HTML)",
  "GET /docs/{path}": "the reference page's scripts and stylesheet",
  "PUT /v1/stream/{path}": DURABLE_STREAMS,
  "POST /v1/stream/{path}": DURABLE_STREAMS,
  "GET /v1/stream/{path}": DURABLE_STREAMS,
  "HEAD /v1/stream/{path}": DURABLE_STREAMS,
  "DELETE /v1/stream/{path}": DURABLE_STREAMS,
};
