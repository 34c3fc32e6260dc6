import type { Env } from "../env.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { RunObject } from "./run-object.ts";
import type { TenantPools } from "./tenant-pools.ts";
import type { StreamApi } from "../streams/stream-api.ts";
import type { TenantIndex } from "./tenant-index.ts";
import type { WebhookObject } from "./webhook-object.ts";

// How every Durable Object is named, in one place: a name decides which object a request reaches.

// RPC results are plain structured-clone values. The generated stub types cannot describe
// payloads holding arbitrary JSON (`unknown`), so routes see the objects' own signatures.
export type RunApi = Pick<
  RunObject,
  | "create"
  | "get"
  | "events"
  | "command"
  | "cancel"
  | "approve"
  | "approval"
  | "purge"
  | "runnerStatus"
  | "recover"
  | "recovery"
  | "checkpointBegin"
  | "checkpointChunk"
  | "checkpointCommit"
  | "checkpointAbort"
  | "checkpointHead"
  | "checkpointChunkAt"
  | "issueTokens"
  | "checkToken"
  | "revokeToken"
  | "revokeAllTokens"
  | "takeBackAssignment"
  | "fetch"
  | "readLog"
  | "streamHead"
  | "reruns"
  | "noteRerun"
>;
type TenantIndexApi = {
  [K in "list" | "upsert" | "remove" | "usage"]: (
    ...args: Parameters<TenantIndex[K]>
  ) => Promise<ReturnType<TenantIndex[K]>>;
};

/** The run's object is named `<tenant>:<runId>`, so a tenant can only ever reach its own runs. */
export function runStub(env: Env, tenant: string, runId: string): RunApi {
  return env.RUNS.get(env.RUNS.idFromName(`${tenant}:${runId}`)) as unknown as RunApi;
}

/** A tenant's first index shard, its original object named by the tenant (the whole list: tenantIndex, tenant-index-shards.ts). */
export function tenantIndexStub(env: Env, tenant: string): TenantIndexApi {
  return env.TENANTS.get(env.TENANTS.idFromName(tenant)) as unknown as TenantIndexApi;
}

/** The StreamObject of one stream: named by tenant and path, so a path under two tenants is two streams. */
export function streamStub(env: Env, tenant: string, path: string): StreamApi {
  return env.STREAMS.get(env.STREAMS.idFromName(JSON.stringify([tenant, path]))) as unknown as StreamApi;
}

type Api<T, K extends keyof T> = {
  [P in K]: T[P] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};
export type DispatcherApi = Api<
  Dispatcher,
  "notice" | "placement" | "poolHosts" | "queueInfo" | "queueDetail" | "configure" | "hostList" | "closeKey" | "fetch"
>;
export type TenantPoolsApi = Api<
  TenantPools,
  "mintKey" | "listKeys" | "revokeKey" | "checkKey" | "keyLive" | "addQueue" | "queueAllowed" | "recordQueue" | "queues"
>;

/** One Dispatcher per (tenant, queue). */
export function dispatcherStub(env: Env, tenant: string, queue: string): DispatcherApi {
  return env.DISPATCHERS.get(env.DISPATCHERS.idFromName(JSON.stringify([tenant, queue]))) as unknown as DispatcherApi;
}

/** One TenantPools per tenant: its pool keys and the names of its queues. */
export function tenantPoolsStub(env: Env, tenant: string): TenantPoolsApi {
  return env.POOLS.get(env.POOLS.idFromName(tenant)) as unknown as TenantPoolsApi;
}

export type WebhookApi = Api<
  WebhookObject,
  "create" | "list" | "remove" | "notice" | "deliveries" | "runDeliveries" | "redeliver" | "ping"
>;

/** One WebhookObject per tenant: its endpoints and deliveries. */
export function webhookStub(env: Env, tenant: string): WebhookApi {
  return env.WEBHOOKS.get(env.WEBHOOKS.idFromName(tenant)) as unknown as WebhookApi;
}
