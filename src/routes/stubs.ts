import type { Env } from "../env.ts";
import type { RunObject } from "../objects/run-object.ts";
import type { TenantIndex } from "../objects/tenant-index.ts";

// RPC results are plain structured-clone values. The generated stub types cannot describe
// payloads holding arbitrary JSON (`unknown`), so routes see the objects' own signatures.
type RunApi = Pick<RunObject, "create" | "get" | "events" | "command" | "cancel" | "approve" | "purge" | "runnerStatus" | "fetch" | "readLog" | "streamHead">;
type TenantIndexApi = { [K in "list" | "upsert" | "remove"]: (...args: Parameters<TenantIndex[K]>) => Promise<ReturnType<TenantIndex[K]>> };

/** The run's object is named `<tenant>:<runId>`, so a tenant can only ever reach its own runs. */
export function runStub(env: Env, tenant: string, runId: string): RunApi {
  return env.RUNS.get(env.RUNS.idFromName(`${tenant}:${runId}`)) as unknown as RunApi;
}

export function tenantIndexStub(env: Env, tenant: string): TenantIndexApi {
  return env.TENANTS.get(env.TENANTS.idFromName(tenant)) as unknown as TenantIndexApi;
}
