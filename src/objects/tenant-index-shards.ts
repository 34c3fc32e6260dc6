import type { Env } from "../env.ts";
import type { Result, RunFilters, RunsPage, UsageReport } from "../protocol/index.ts";
import type { IndexEntry, TenantIndexApi } from "../run/index-sync.ts";
import type { TenantIndex } from "./tenant-index.ts";
import { addUsage, mergePages } from "./tenant-index-merge.ts";
import { usageFromSums } from "./tenant-index-usage.ts";

// A tenant's run list spread over several TenantIndex objects, so no one object takes every status
// change of every run of a busy tenant (docs/SCALE.md has the arithmetic). A run's shard is a pure
// function of its id, its creation time and the layout, so each of its syncs lands on the same
// object without asking anyone. Shard 0 keeps the tenant's original object name: a tenant indexed
// before sharding keeps its runs there (every run created before TENANT_INDEX_SHARDED_SINCE), and
// the list reads every shard, so old runs stay listed with no copying.

/** Shards per tenant when TENANT_INDEX_SHARDS is unset (docs/SCALE.md: 10 k runs a minute stay under 10 % of one object's requests). */
export const DEFAULT_TENANT_INDEX_SHARDS = 8;
/** More shards than this makes every list a fan-out of that many calls. */
export const MAX_TENANT_INDEX_SHARDS = 64;

export interface ShardLayout {
  shards: number;
  /** Runs created before this time (ms) live in shard 0, where an unsharded index put them. */
  shardedSince: number;
}

export function shardLayout(env: Pick<Env, "TENANT_INDEX_SHARDS" | "TENANT_INDEX_SHARDED_SINCE">): ShardLayout {
  const shards = Number(env.TENANT_INDEX_SHARDS ?? DEFAULT_TENANT_INDEX_SHARDS);
  const since = Number(env.TENANT_INDEX_SHARDED_SINCE ?? 0);
  return {
    shards:
      Number.isInteger(shards) && shards >= 1 ? Math.min(shards, MAX_TENANT_INDEX_SHARDS) : DEFAULT_TENANT_INDEX_SHARDS,
    shardedSince: Number.isFinite(since) && since > 0 ? since : 0,
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

export function shardOf(layout: ShardLayout, runId: string, createdAt: number): number {
  if (createdAt < layout.shardedSince) return 0;
  return hash(runId) % layout.shards;
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
    upsert: (entry: IndexEntry) => shardStub(env, tenant, shardOf(layout, entry.runId, entry.createdAt)).upsert(entry),
    remove: (runId: string, version: number, createdAt: number) =>
      shardStub(env, tenant, shardOf(layout, runId, createdAt)).remove(runId, version),
    list: async (filters: RunFilters) =>
      mergePages(await Promise.all(all().map((shard) => shard.list(filters))), filters.limit),
    usage: async (range) =>
      usageFromSums(range, addUsage(await Promise.all(all().map((shard) => shard.usageSums(range))))),
  };
}
