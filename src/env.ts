import type { Dispatcher } from "./objects/dispatcher.ts";
import type { RunObject } from "./objects/run-object.ts";
import type { TenantPools } from "./objects/tenant-pools.ts";
import type { TenantIndex } from "./objects/tenant-index.ts";
import type { WebhookObject } from "./objects/webhook-object.ts";

export interface Env {
  RUNS: DurableObjectNamespace<RunObject>;
  TENANTS: DurableObjectNamespace<TenantIndex>;
  /** One Dispatcher per (tenant, queue) of pool runs (reach it via dispatcherStub). */
  DISPATCHERS: DurableObjectNamespace<Dispatcher>;
  /** One TenantPools per tenant: pool keys and queue names (reach it via tenantPoolsStub). */
  POOLS: DurableObjectNamespace<TenantPools>;
  /** One WebhookObject per tenant: its webhook endpoints and deliveries (reach it via webhookStub). */
  WEBHOOKS: DurableObjectNamespace<WebhookObject>;
  /** Shards of each tenant's run list (default 8; raise it, never lower it; src/objects/tenant-index-shards.ts, docs/SCALE.md). */
  TENANT_INDEX_SHARDS?: string;
  /** Comma-separated `key=tenant` pairs. */
  API_KEYS: string;
  /** HMAC secret for runner and viewer tokens. */
  TOKEN_SECRET: string;
  /** One StreamObject per Durable Streams stream, named by tenant and path (reach it via streamStub). */
  STREAMS: DurableObjectNamespace;
  /** "true" lets requests without credentials use streams as a sandbox tenant of their own (ANONYMOUS_STREAM_TENANT). Off by default. */
  ALLOW_ANONYMOUS_STREAMS?: string;
  /** The static assets (console/dist): the console, and the API reference page's script and stylesheet. */
  ASSETS?: Fetcher;
  /** Development only (.dev.vars): the API key the console's sign-in page suggests on localhost. */
  DEV_SIGN_IN_KEY?: string;
  /** Largest checkpoint a run takes, in bytes (default 52428800, 50 MiB). */
  CHECKPOINT_MAX_BYTES?: string;
  /** Longest an interacting viewer token may live, in milliseconds (default 604800000, 7 days). */
  INTERACT_TOKEN_MAX_TTL_MS?: string;
  /** How long a long-poll stream read waits for data, in milliseconds (default 20000). */
  STREAM_LONG_POLL_MS?: string;
  /** GET|POST /v1/runs/:runId/agui: heartbeat when idle, and how long one response lasts, in ms (15000, 300000). */
  AGUI_HEARTBEAT_MS?: string;
  AGUI_STREAM_LIFETIME_MS?: string;
  // Per-run bounds (defaults in src/protocol/limits.ts RUN_LIMIT_DEFAULTS, listed in docs/SECURITY.md).
  READ_PAGE_MAX_BYTES?: string;
  VIEWERS_PER_RUN_MAX?: string;
  VIEWER_BACKLOG_MAX_BYTES?: string;
  APPROVALS_PENDING_MAX?: string;
  RUN_LOG_MAX_BYTES?: string;
  CLAIMS_PER_MINUTE?: string;
  // Webhooks (src/webhooks/settings.ts, docs/WEBHOOKS.md).
  /** Development only (.dev.vars): "true" lets endpoints be http: to loopback hosts. */
  ALLOW_HTTP_WEBHOOKS?: string;
  /** The first retry's delay in milliseconds (default 5000), doubling after each failure. */
  WEBHOOK_RETRY_BASE_MS?: string;
  /** How long a delivery is retried before it is failed, in milliseconds (default 86400000, 24 h). */
  WEBHOOK_RETRY_FOR_MS?: string;
  /** How long one attempt waits for the receiver, in milliseconds (default 10000). */
  WEBHOOK_ATTEMPT_TIMEOUT_MS?: string;
}
