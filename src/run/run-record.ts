import type { RunRecord } from "../protocol/index.ts";
import type { Approvals } from "./approvals.ts";
import type { Checkpoints } from "./checkpoints.ts";
import { recoveryPolicyOf } from "./pool-run.ts";
import type { RunRow } from "./store.ts";
import type { Deadlines } from "./deadlines.ts";
import type { Usage } from "./usage.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** What the run's record is read from: the row, and the one thing each other store adds. */
export interface RecordSources {
  mustLoad(): RunRow;
  runnerConnected(): boolean;
  readonly checkpoints: Pick<Checkpoints, "current">;
  readonly usage: Pick<Usage, "totals">;
  readonly approvals: Pick<Approvals, "summaries">;
  readonly deadlines: Pick<Deadlines, "leaseExpiresAt">;
}

/** The run as the API shows it (RunRecord in src/protocol/records.ts). */
export function runRecord(sources: RecordSources): RunRecord {
  const run = sources.mustLoad();

  return {
    id: run.runId,
    status: run.status,
    epoch: run.epoch,
    createdAt: iso(run.createdAt) as string,
    claimedAt: iso(run.claimedAt),
    finishedAt: iso(run.finishedAt),
    lastSeq: run.lastSeq,
    highestSourceSeq: run.highestSourceSeq,
    generation: run.generation,
    nativeSession: run.nativeSession,
    checkpoint: sources.checkpoints.current(),
    recovery:
      run.recovery === null
        ? null
        : {
            mode: run.recovery.mode,
            reason: run.recovery.reason,
            since: iso(run.recovery.since) as string,
            deadline: iso(run.recovery.deadline) as string,
          },
    outcome: run.outcome,
    agent: run.agent,
    input: run.input,
    timeouts: run.timeouts,
    retentionMs: run.retentionMs,
    metadata: run.metadata,
    tags: run.tags,
    usage: sources.usage.totals(),
    budget: run.budget,
    pendingApprovals: sources.approvals.summaries(),
    runner: {
      id: run.runnerId,
      connected: sources.runnerConnected(),
      leaseExpiresAt: iso(sources.deadlines.leaseExpiresAt()),
    },
    queue: run.queue,
    recoveryPolicy: recoveryPolicyOf(run),
    // The dispatcher's view; the routes fill it in (src/pools/placement.ts).
    poolHost: null,
    queuePosition: null,
    dispatch: null,
  };
}
