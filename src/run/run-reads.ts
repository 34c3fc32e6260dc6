import type { EventsPage, RecoveryState, RunStatus } from "../protocol/index.ts";
import type { Approvals } from "./approvals.ts";
import type { Checkpoints } from "./checkpoints.ts";
import type { RunLog } from "./run-log.ts";
import type { RunRow, RunStatusRow } from "./store.ts";
import type { ReplaySource } from "./sockets/viewer-replay.ts";

// What the run object's read calls answer, each from the narrow part of the run it reads.

interface RowReader {
  mustLoad(): RunRow;
}

/** A page of events after `after`, bounded by count and bytes, with the run's status. */
export function eventsPage(
  run: RowReader & { readonly log: Pick<RunLog, "eventsAfter"> },
  after: number,
  limit: number,
  pageBytes: number,
): EventsPage {
  const { events, hasMore } = run.log.eventsAfter(after, limit, pageBytes);
  const last = events[events.length - 1];
  return { events, nextAfter: last ? last.seq : after, hasMore, status: run.mustLoad().status };
}

/** What `runner-bridge resume` reads before it claims. */
export function recoveryState(run: RowReader & { readonly checkpoints: Pick<Checkpoints, "current"> }): RecoveryState {
  const row = run.mustLoad();
  return {
    status: row.status,
    generation: row.generation,
    mode: row.recovery?.mode ?? null,
    nativeSession: row.nativeSession,
    checkpoint: run.checkpoints.current(),
  };
}

export function approvalOf(run: { readonly approvals: Pick<Approvals, "find"> }, requestId: string) {
  return run.approvals.find(requestId);
}

/** What a runner token may learn before attaching: enough to decide, never to wait. */
export function runnerStatus(run: RowReader): { runId: string; status: RunStatus; epoch: number } {
  const row = run.mustLoad();
  return { runId: row.runId, status: row.status, epoch: row.epoch };
}

/** What a viewer's replay reads: the log, and the status as it is each time it asks. */
export function replaySource(run: { readonly log: RunLog; statusRow(): RunStatusRow | null }): ReplaySource {
  return { log: run.log, status: () => run.statusRow()?.status };
}
