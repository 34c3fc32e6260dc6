import type { Env } from "../env.ts";
import type { Result, RunFilters, RunsPage, UsageReport } from "../protocol/index.ts";
import type { IndexEntry, TenantIndexApi } from "../run/index-sync.ts";
import type { TenantIndex } from "./tenant-index.ts";
import { addUsage, mergePages } from "./tenant-index-merge.ts";
import { usageFromSums } from "./tenant-index-usage.ts";

// A tenant's run list spread over several TenantIndex objects, so no one object takes every status
// change of every run of a busy tenant (docs/SCALE.md has the arithmetic). A run's shard is a pure
// function of its id and the shard count it was created under, which the run keeps in its own row
// (index-sync.ts), so each of its syncs lands on the same object without asking anyone, even after
// TENANT_INDEX_SHARDS is raised. Shard 0 keeps the tenant's original object name: a run from before
// sharding counts as created under one shard, so it stays there and stays listed with no copying.

/** Shards per tenant when TENANT_INDEX_SHARDS is unset (docs/SCALE.md: 10 k runs a minute stay under 10 % of one object's requests). */
export const DEFAULT_TENANT_INDEX_SHARDS = 8;
/** More shards than this makes every list a fan-out of that many calls. */
export const MAX_TENANT_INDEX_SHARDS = 64;

export interface ShardLayout {
  /** Shards new runs are spread over, and the shards a list reads: raise it, never lower it. */
  shards: number;
}

export function shardLayout(env: Pick<Env, "TENANT_INDEX_SHARDS">): ShardLayout {
  const shards = Number(env.TENANT_INDEX_SHARDS ?? DEFAULT_TENANT_INDEX_SHARDS);
  return {
    shards:
      Number.isInteger(shards) && shards >= 1 ? Math.min(shards, MAX_TENANT_INDEX_SHARDS) : DEFAULT_TENANT_INDEX_SHARDS,
  };
}

/** FNV-1a over the run id's UTF-16 units: cheap, stable, and spread evenly enough for ids. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The shard of a run created under `indexShards` shards (1 for a run from before sharding: shard 0). */
export function shardOf(runId: string, indexShards: number): number {
  return hash(runId) % Math.max(1, indexShards);
}

/** Shard 0 is the tenant's original index; the others are named by tenant and number. */
export function shardName(tenant: string, shard: number): string {
  return shard === 0 ? tenant : JSON.stringify(["tenant-index-shard", tenant, shard]);
}

type ShardApi = {
  [K in "list" | "upsert" | "remove" | "usageSums"]: (
    ...args: Parameters<TenantIndex[K]>
  ) => Promise<ReturnType<TenantIndex[K]>>;
};

function shardStub(env: Env, tenant: string, shard: number): ShardApi {
  return env.TENANTS.get(env.TENANTS.idFromName(shardName(tenant, shard))) as unknown as ShardApi;
}

export interface ShardedTenantIndex extends TenantIndexApi {
  list(filters: RunFilters): Promise<Result<RunsPage>>;
  usage(range: { from: string; to: string; groupBy: "day" | "agent" | "tag" }): Promise<UsageReport>;
}

/** The tenant's index as one list: writes go to the run's shard, reads merge every shard's answer. */
export function tenantIndex(env: Env, tenant: string, layout: ShardLayout = shardLayout(env)): ShardedTenantIndex {
  const all = () => Array.from({ length: layout.shards }, (_, shard) => shardStub(env, tenant, shard));
  return {
    shards: layout.shards,
    upsert: (entry: IndexEntry) => shardStub(env, tenant, shardOf(entry.runId, entry.indexShards)).upsert(entry),
    remove: (runId: string, version: number, indexShards: number) =>
      shardStub(env, tenant, shardOf(runId, indexShards)).remove(runId, version),
    list: async (filters: RunFilters) =>
      mergePages(await Promise.all(all().map((shard) => shard.list(filters))), filters.limit),
    usage: async (range) =>
      usageFromSums(range, addUsage(await Promise.all(all().map((shard) => shard.usageSums(range))))),
  };
}
