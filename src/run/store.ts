import {
  type Budget,
  type NativeSession,
  type Outcome,
  type RecoveryMode,
  type RunStatus,
  resolveTimeouts,
  type Timeouts,
} from "../protocol/index.ts";
import { generationProducer, RUNNER_PRODUCER } from "./claim-epoch.ts";
import { RunLog } from "./run-log.ts";

export { decodeEvent, type EventDraft, eventJson } from "./run-log.ts";

const parseOrNull = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/** A recovering run's state (src/run/recovery.ts); times in ms. */
export interface Recovery {
  mode: RecoveryMode;
  reason: string;
  since: number;
  deadline: number;
}

/** The single row describing the run, with what the log core knows of it. */
export interface RunRow {
  tenant: string;
  runId: string;
  fingerprint: string;
  status: RunStatus;
  /** Rises with every status change and the purge: orders the run's tenant-index syncs. */
  statusVersion: number;
  /** The claim epoch (src/run/claim-epoch.ts): 0 until the first claim. */
  epoch: number;
  createdAt: number;
  claimedAt: number | null;
  finishedAt: number | null;
  purgedAt: number | null;
  /** The log's tail: the seq of the last event. */
  lastSeq: number;
  /** The current generation's last accepted sourceSeq; its stored sourceSeqs are always 1..this. */
  highestSourceSeq: number;
  /** The agent generation serving the run (1, 2, …). */
  generation: number;
  /** The provider's session, from the last `agent.session` runner event. */
  nativeSession: NativeSession | null;
  /** Set while the status is `recovering`. */
  recovery: Recovery | null;
  /** How many times the run entered recovery; operators' decisions belong to one episode. */
  recoveryEpisode: number;
  controllerSeq: number;
  /** The runnerId of the newest claim. */
  runnerId: string | null;
  outcome: Outcome | null;
  agent: unknown;
  input: unknown;
  metadata: Record<string, unknown>;
  tags: string[];
  budget: Budget | null;
  timeouts: Timeouts;
  retentionMs: number;
  /** A pool run's queue (its `agent` names the profile); null for a run started by hand. */
  queue: string | null;
  recoveryPolicy: "auto" | "manual" | null;
  maxRecoveries: number;
  /** Automatic recoveries the pool made so far (src/run/pool-run.ts). */
  autoRecoveries: number;
}

export type NewRun = Omit<
  RunRow,
  | "epoch"
  | "statusVersion"
  | "lastSeq"
  | "highestSourceSeq"
  | "generation"
  | "nativeSession"
  | "recovery"
  | "recoveryEpisode"
  | "controllerSeq"
  | "claimedAt"
  | "finishedAt"
  | "purgedAt"
  | "runnerId"
  | "outcome"
  | "autoRecoveries"
>;

interface RawRun extends Record<string, SqlStorageValue> {
  tenant: string;
  run_id: string;
  fingerprint: string;
  status: string;
  status_version: number;
  created_at: number;
  claimed_at: number | null;
  finished_at: number | null;
  purged_at: number | null;
  controller_seq: number;
  runner_id: string | null;
  outcome: string | null;
  agent: string | null;
  input: string | null;
  metadata: string;
  tags: string;
  budget: string | null;
  timeouts: string;
  retention_ms: number;
  generation: number;
  native_session: string | null;
  recovery: string | null;
  recovery_episode: number;
  queue: string | null;
  recovery_policy: string | null;
  max_recoveries: number;
  auto_recoveries: number;
}

/** The run's status and when it finished and was purged: RunStatusRow. */
export interface RunStatusRow {
  status: RunStatus;
  finishedAt: number | null;
  purgedAt: number | null;
}

/**
 * The run's status, finish and purge times, or null before it exists: what an operation's delivery
 * needs after its commit, and a read's check that the run is there, without the rest of the row
 * and the JSON columns load() parses.
 */
export function readRunStatus(sql: SqlStorage): RunStatusRow | null {
  const raw = sql
    .exec<{ status: string; finished_at: number | null; purged_at: number | null }>(
      "SELECT status, finished_at, purged_at FROM run WHERE singleton = 1",
    )
    .toArray()[0];
  return raw ? { status: raw.status as RunStatus, finishedAt: raw.finished_at, purgedAt: raw.purged_at } : null;
}

/** The run row as it is, for reads outside a RunMachine (the index sync, the log as a stream). */
export function readRun(sql: SqlStorage, log: RunLog = new RunLog(sql)): RunRow | null {
  return new RunStore(sql, log).load();
}

/**
 * Typed access to the run row, with what the event log knows of it (tail, claim epoch, each
 * generation's last sourceSeq). Callers hold the transaction.
 */
export class RunStore {
  private readonly sql: SqlStorage;
  private readonly log: RunLog;

  constructor(sql: SqlStorage, log: RunLog = new RunLog(sql)) {
    this.sql = sql;
    this.log = log;
  }

  load(): RunRow | null {
    const raw = this.sql.exec<RawRun>("SELECT * FROM run WHERE singleton = 1").toArray()[0];
    if (!raw) return null;
    const runner = this.log.runnerState(raw.generation);
    return {
      tenant: raw.tenant,
      runId: raw.run_id,
      fingerprint: raw.fingerprint,
      status: raw.status as RunStatus,
      statusVersion: raw.status_version,
      epoch: this.log.claimEpochNow(),
      createdAt: raw.created_at,
      claimedAt: raw.claimed_at,
      finishedAt: raw.finished_at,
      purgedAt: raw.purged_at,
      lastSeq: this.log.tail()?.seq ?? 0,
      highestSourceSeq: runner?.lastSeq ?? 0,
      generation: raw.generation,
      nativeSession: parseOrNull(raw.native_session) as NativeSession | null,
      recovery: parseOrNull(raw.recovery) as Recovery | null,
      recoveryEpisode: raw.recovery_episode,
      controllerSeq: raw.controller_seq,
      runnerId: raw.runner_id,
      outcome: parseOrNull(raw.outcome) as Outcome | null,
      agent: parseOrNull(raw.agent),
      input: parseOrNull(raw.input),
      metadata: JSON.parse(raw.metadata) as Record<string, unknown>,
      tags: JSON.parse(raw.tags) as string[],
      budget: parseOrNull(raw.budget) as Budget | null,
      // Runs stored before a deadline existed take its default (recoverMs came with recovery).
      timeouts: resolveTimeouts(JSON.parse(raw.timeouts) as Partial<Timeouts>),
      retentionMs: raw.retention_ms,
      queue: raw.queue,
      recoveryPolicy: raw.recovery_policy as RunRow["recoveryPolicy"],
      maxRecoveries: raw.max_recoveries,
      autoRecoveries: raw.auto_recoveries,
    };
  }

  insert(run: NewRun): void {
    this.sql.exec(
      `INSERT INTO run (singleton, tenant, run_id, fingerprint, status, created_at, agent, input, metadata, timeouts,
         retention_ms, queue, recovery_policy, max_recoveries, tags, budget)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      run.tenant,
      run.runId,
      run.fingerprint,
      run.status,
      run.createdAt,
      run.agent === undefined ? null : JSON.stringify(run.agent),
      run.input === undefined ? null : JSON.stringify(run.input),
      JSON.stringify(run.metadata),
      JSON.stringify(run.timeouts),
      run.retentionMs,
      run.queue,
      run.recoveryPolicy,
      run.maxRecoveries,
      JSON.stringify(run.tags),
      run.budget === null ? null : JSON.stringify(run.budget),
    );
    this.log.init();
  }

  setStatus(status: RunStatus): void {
    this.sql.exec("UPDATE run SET status = ? WHERE singleton = 1", status);
  }

  bumpStatusVersion(): void {
    this.sql.exec("UPDATE run SET status_version = status_version + 1 WHERE singleton = 1");
  }

  /**
   * Records a new claim by `runnerId` of `generation` (set first, when it starts one): the next
   * claim epoch, which it returns. The generation's producer row takes that epoch, so the
   * claimant's events are judged under it; generation 1's row is the claim epoch's own.
   */
  claim(runnerId: string, generation: number, now: number): number {
    const epoch = this.log.nextClaimEpoch(now);
    if (generationProducer(generation) !== RUNNER_PRODUCER) {
      const state = this.log.runnerState(generation);
      this.log.recordRunnerState(generation, { epoch, lastSeq: state?.lastSeq ?? 0 }, now);
    }
    this.sql.exec("UPDATE run SET runner_id = ?, claimed_at = ? WHERE singleton = 1", runnerId, now);
    return epoch;
  }

  /** Counts one automatic recovery of a pool run. */
  countAutoRecovery(): void {
    this.sql.exec("UPDATE run SET auto_recoveries = auto_recoveries + 1 WHERE singleton = 1");
  }

  setGeneration(generation: number): void {
    this.sql.exec("UPDATE run SET generation = ? WHERE singleton = 1", generation);
  }

  setNativeSession(session: NativeSession): void {
    this.sql.exec("UPDATE run SET native_session = ? WHERE singleton = 1", JSON.stringify(session));
  }

  /** Enters (a new episode), changes or leaves recovery. */
  setRecovery(recovery: Recovery | null, newEpisode = false): void {
    this.sql.exec(
      "UPDATE run SET recovery = ?, recovery_episode = recovery_episode + ? WHERE singleton = 1",
      recovery === null ? null : JSON.stringify(recovery),
      newEpisode ? 1 : 0,
    );
  }

  /** Records the outcome and closes the log: a finished run's stream reads as closed. */
  finish(outcome: Outcome, now: number): void {
    this.sql.exec(
      "UPDATE run SET status = ?, outcome = ?, finished_at = ? WHERE singleton = 1",
      outcome.status,
      JSON.stringify(outcome),
      now,
    );
    this.log.close();
  }

  nextControllerSeq(): number {
    return this.sql
      .exec<{ controller_seq: number }>(
        "UPDATE run SET controller_seq = controller_seq + 1 WHERE singleton = 1 RETURNING controller_seq",
      )
      .one().controller_seq;
  }
}
