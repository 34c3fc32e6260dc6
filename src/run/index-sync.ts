import type { RunStatus } from "../protocol/index.ts";
import { scheduleAlarm } from "./alarm.ts";
import { RunStore } from "./store.ts";
import { Timers } from "./timers.ts";

/** The tenant's list of runs (TenantIndex), as a run's object updates it. */
export interface TenantIndexApi {
  upsert(runId: string, status: RunStatus, createdAt: number, version: number): Promise<void>;
  remove(runId: string, version: number): Promise<void>;
}

const RETRY_MS = 5_000;

/**
 * Brings the tenant's run list up to date with this run (after a status change or a purge). The
 * index is another object, so this is not part of the run's transaction: a failure leaves an
 * `index_sync` timer and the alarm tries again. Two syncs can be in flight at once and land in
 * either order, so each carries the run's status version and the index keeps the highest.
 */
export async function syncTenantIndex(
  storage: DurableObjectStorage,
  index: (tenant: string) => TenantIndexApi,
): Promise<void> {
  const run = new RunStore(storage.sql).load();
  if (!run) return;
  try {
    if (run.purgedAt !== null) await index(run.tenant).remove(run.runId, run.statusVersion);
    else await index(run.tenant).upsert(run.runId, run.status, run.createdAt, run.statusVersion);
  } catch {
    const timers = new Timers(storage.sql);
    timers.set("index_sync", Date.now() + RETRY_MS);
    await scheduleAlarm(storage, timers);
  }
}
