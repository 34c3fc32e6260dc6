import type { PoolNotice } from "../run/pool-run.ts";
import type { DispatchStore, QueuedRun } from "./dispatch-store.ts";

/** A host to tell that its assignment was taken back. */
export interface Revocation {
  hostId: string;
  assignmentId: string;
  runId: string;
  reason: string;
}

/** The row a notification makes for a run the dispatcher does not know yet. */
function newRow(notice: PoolNotice, now: number): QueuedRun {
  return {
    runId: notice.runId,
    state: "queued",
    profile: notice.profile,
    prompt: notice.prompt,
    start: notice.start ?? "run",
    generation: notice.generation,
    tokenTtlMs: notice.tokenTtlMs,
    queuedAt: notice.createdAt,
    lastNotice: 0,
    hostId: null,
    lastHost: null,
    assignmentId: null,
    tokenId: null,
    leaseDue: null,
    avoidHost: null,
    avoidUntil: null,
    reason: null,
    updatedAt: now,
  };
}

/** The run leaves its host: an unclaimed assignment is revoked, the host is remembered. */
function release(run: QueuedRun, reason: string, revocations: Revocation[]): QueuedRun {
  if (run.state === "assigned" && run.hostId !== null && run.assignmentId !== null) {
    revocations.push({ hostId: run.hostId, assignmentId: run.assignmentId, runId: run.runId, reason });
  }
  return {
    ...run,
    hostId: null,
    lastHost: run.hostId ?? run.lastHost,
    assignmentId: null,
    tokenId: null,
    leaseDue: null,
  };
}

/**
 * Applies one notification from a run's outbox (src/run/pool-run.ts). A run's notifications are
 * applied in their outbox order (`seq`); one seen before — by seq, or by its (run, generation,
 * status) key — is acknowledged and changes nothing. Answers whether it was applied and which
 * assignments it took back.
 */
export function applyNotice(
  store: DispatchStore,
  notice: PoolNotice,
  seq: number,
  key: string,
  now: number,
): { applied: boolean; revocations: Revocation[] } {
  const revocations: Revocation[] = [];
  const existing = store.find(notice.runId);
  if ((existing && seq <= existing.lastNotice) || !store.firstNotice(notice.runId, key, now)) {
    return { applied: false, revocations };
  }
  const run = { ...(existing ?? newRow(notice, now)), lastNotice: seq, updatedAt: now };
  switch (notice.kind) {
    case "queued":
      store.save(run);
      break;
    case "claimed":
      store.save({ ...run, state: "running", generation: notice.generation, leaseDue: null, reason: null });
      break;
    case "recover":
      store.save({
        ...release(run, "the run is being recovered elsewhere", revocations),
        state: "queued",
        start: notice.start ?? "run",
        generation: notice.generation,
        reason: null,
      });
      break;
    case "parked":
      store.save({
        ...release(run, "the run waits for a recovery decision", revocations),
        state: "parked",
        reason: notice.reason ?? null,
      });
      break;
    case "finished":
      store.save({ ...release(run, "the run ended", revocations), state: "finished", reason: null });
      break;
  }
  return { applied: true, revocations };
}
