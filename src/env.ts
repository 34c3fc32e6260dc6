import type { RunObject } from "./objects/run-object.ts";
import type { TenantIndex } from "./objects/tenant-index.ts";

export interface Env {
  RUNS: DurableObjectNamespace<RunObject>;
  TENANTS: DurableObjectNamespace<TenantIndex>;
  /** Comma-separated `key=tenant` pairs. */
  API_KEYS: string;
  /** HMAC secret for runner and viewer tokens. */
  TOKEN_SECRET: string;
}
