import { agentNameOf, type RunStatus, toNanoUsd } from "../protocol/index.ts";
import { armAlarm, Deadlines } from "./deadlines.ts";
import { readRun } from "./store.ts";
import { type UsageDay, usageForIndex } from "./usage.ts";

/** What the tenant's list keeps of one run: to list it, find it (tags, metadata) and sum its usage. */
export interface IndexEntry {
  runId: string;
  status: RunStatus;
  createdAt: number;
  /** The run's status version: an entry below the row's is ignored. */
  version: number;
  agent: string | null;
  /** The tenant index's shard count when the run was created (1 before sharding): picks its shard for good. */
  indexShards: number;
  /** The pool queue of a pool run; null (or absent) for one started by hand. */
  queue?: string | null | undefined;
  tags: string[];
  /** The metadata entries the list filters by (`meta.KEY=value`): scalars, as text. */
  metadata: Record<string, string>;
  /** The run's usage per UTC day. */
  usage: UsageDay[];
  /** The run's stated costs in nano-dollars; null when its provider stated none. */
  costNanoUsd: number | null;
}

/**
 * The tenant's list of runs, as a run's object updates it: its shards (tenant-index-shards.ts), which
 * pick the run's shard from its id and the shard count it was created under.
 */
export interface TenantIndexApi {
  /** The shard count today, which a run syncing for the first time keeps as its own. */
  readonly shards: number;
  upsert(entry: IndexEntry): Promise<void>;
  remove(runId: string, version: number, indexShards: number): Promise<void>;
}

const RETRY_MS = 5_000;
/** Longest metadata key and value text the list indexes; longer ones are kept, not searchable. */
export const INDEXED_META_CHARS = 256;

/** The metadata entries a list filter can match: strings, numbers and booleans, as their text. */
export function indexedMetadata(metadata: Record<string, unknown>): Record<string, string> {
  const indexed: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") continue;
    const text = String(value);
    if (key.length <= INDEXED_META_CHARS && text.length <= INDEXED_META_CHARS) indexed[key] = text;
  }
  return indexed;
}

/**
 * Brings the tenant's run list up to date with this run (after a status or usage change, or a
 * purge). The index is another object, so this is not part of the run's transaction: a failure
 * leaves an `index_sync` timer and the alarm tries again. Two syncs can be in flight at once and
 * land in either order, so each carries the run's status version and the index keeps the highest.
 */
export async function syncTenantIndex(
  storage: DurableObjectStorage,
  index: (tenant: string) => TenantIndexApi,
): Promise<void> {
  const run = readRun(storage.sql);
  if (!run) return;
  const usage = usageForIndex(storage.sql);
  const cost = usage.costUsd;
  const tenantIndex = index(run.tenant);
  const indexShards = runIndexShards(storage.sql, tenantIndex.shards);
  try {
    if (run.purgedAt !== null) await tenantIndex.remove(run.runId, run.statusVersion, indexShards);
    else {
      await tenantIndex.upsert({
        runId: run.runId,
        status: run.status,
        createdAt: run.createdAt,
        version: run.statusVersion,
        indexShards,
        agent: agentNameOf(run.agent),
        queue: run.queue,
        tags: run.tags,
        metadata: indexedMetadata(run.metadata),
        usage: usage.days,
        costNanoUsd: cost === null ? null : toNanoUsd(cost),
      });
    }
  } catch {
    new Deadlines(storage.sql).armIndexSync(Date.now() + RETRY_MS);
    await armAlarm(storage);
  }
}

/**
 * The shard count the run is indexed under: the one its row keeps, else (its first sync) today's,
 * written before anything is sent so every later sync reaches the same shard. Runs from before
 * sharding were given 1 by their migration, which keeps them in shard 0.
 */
function runIndexShards(sql: SqlStorage, today: number): number {
  const kept = sql.exec<{ index_shards: number | null }>("SELECT index_shards FROM run WHERE singleton = 1").one();
  if (kept.index_shards !== null) return kept.index_shards;
  sql.exec("UPDATE run SET index_shards = ? WHERE singleton = 1", today);
  return today;
}
