import type { RunStatus } from "../protocol/index.ts";
import { scheduleAlarm } from "./alarm.ts";
import { RunStore } from "./store.ts";
import { Timers } from "./timers.ts";

/** The tenant's list of runs (TenantIndex), as a run's object updates it. */
export interface TenantIndexApi {
  upsert(runId: string, status: RunStatus, createdAt: number): Promise<void>;
  remove(runId: string): Promise<void>;
}

const RETRY_MS = 5_000;

/**
 * Brings the tenant's run list up to date with this run (after a status change or a purge). The
 * index is another object, so this is not part of the run's transaction: a failure leaves an
 * `index_sync` timer and the alarm tries again.
 */
export async function syncTenantIndex(
  storage: DurableObjectStorage,
  index: (tenant: string) => TenantIndexApi,
): Promise<void> {
  const run = new RunStore(storage.sql).load();
  if (!run) return;
  try {
    if (run.purgedAt !== null) await index(run.tenant).remove(run.runId);
    else await index(run.tenant).upsert(run.runId, run.status, run.createdAt);
  } catch {
    const timers = new Timers(storage.sql);
    timers.set("index_sync", Date.now() + RETRY_MS);
    await scheduleAlarm(storage, timers);
  }
}
