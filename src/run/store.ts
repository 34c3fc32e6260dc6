import { LogCore } from "../log/log.ts";
import { type ProducerState, RUNNER_PRODUCER_RULES } from "../log/producers.ts";
import {
  type Budget,
  type NativeSession,
  type Outcome,
  type RecoveryMode,
  type RunEvent,
  type RunStatus,
  resolveTimeouts,
  type Timeouts,
} from "../protocol/index.ts";
import { ClaimEpoch, generationProducer, RUNNER_PRODUCER } from "./claim-epoch.ts";

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

/** An event before it has a seq: a control event, or a runner event with its sourceSeq. */
export interface EventDraft {
  epoch: number;
  sourceSeq?: number;
  /** With sourceSeq: the generation that sent it. */
  generation?: number;
  type: string;
  data: unknown;
  /** When it is stored. */
  time: number;
  /** Runner events: when the agent wrote it, as the runner reported (null: it did not say). */
  agentTime?: number | null;
}

const decoder = new TextDecoder();
const parseOrNull = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/** Each appended event's JSON, serialised once for its log entry and reused for live viewers. */
const serialised = new WeakMap<RunEvent, string>();

/** The event's JSON as stored: JSON.stringify of it, remembered for events this store appended. */
export function eventJson(event: RunEvent): string {
  let text = serialised.get(event);
  if (text === undefined) {
    text = JSON.stringify(event);
    serialised.set(event, text);
  }
  return text;
}

/** A stored log entry is the event's JSON, byte for byte what viewers and stream readers get. */
export function decodeEvent(body: Uint8Array): RunEvent {
  return JSON.parse(decoder.decode(body)) as RunEvent;
}

/** Typed access to the run row and its event log. Callers hold the transaction. */
export class RunStore {
  private readonly sql: SqlStorage;
  readonly log: LogCore;
  readonly claimEpoch: ClaimEpoch;

  constructor(sql: SqlStorage) {
    this.sql = sql;
    this.log = new LogCore(sql, RUNNER_PRODUCER_RULES);
    this.claimEpoch = new ClaimEpoch(this.log.producers);
  }

  load(): RunRow | null {
    const raw = this.sql.exec<RawRun>("SELECT * FROM run WHERE singleton = 1").toArray()[0];
    if (!raw) return null;
    const runner = this.log.producers.get(generationProducer(raw.generation));
    return {
      tenant: raw.tenant,
      runId: raw.run_id,
      fingerprint: raw.fingerprint,
      status: raw.status as RunStatus,
      statusVersion: raw.status_version,
      epoch: this.claimEpoch.current(),
      createdAt: raw.created_at,
      claimedAt: raw.claimed_at,
      finishedAt: raw.finished_at,
      purgedAt: raw.purged_at,
      lastSeq: this.log.state()?.tail.seq ?? 0,
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
    const epoch = this.claimEpoch.increment(now);
    const producer = generationProducer(generation);
    if (producer !== RUNNER_PRODUCER) {
      const state = this.log.producers.get(producer);
      this.log.producers.record(producer, { epoch, lastSeq: state?.lastSeq ?? 0 }, now);
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

  /**
   * True once any generation stored a runner event: read from the few producer rows (`runner`,
   * `runner.g<N>`), since log_entries has no producer index and scanning it grows with the log.
   */
  hasRunnerEvents(): boolean {
    return (
      this.sql
        .exec(
          "SELECT 1 FROM log_producers WHERE (producer_id = 'runner' OR producer_id LIKE 'runner.g%') AND last_seq > 0 LIMIT 1",
        )
        .toArray().length > 0
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
    this.log.close(null);
  }

  nextControllerSeq(): number {
    return this.sql
      .exec<{ controller_seq: number }>(
        "UPDATE run SET controller_seq = controller_seq + 1 WHERE singleton = 1 RETURNING controller_seq",
      )
      .one().controller_seq;
  }

  /** A generation's producer state: its epoch and last accepted sourceSeq (null before its first claim). */
  runnerState(generation: number): ProducerState | null {
    return this.log.producers.get(generationProducer(generation));
  }

  /** Appends one control event at the next seq. */
  append(event: EventDraft): RunEvent {
    return this.appendEvents([event])[0] as RunEvent;
  }

  /** The events `drafts` become at the next seqs, not yet stored. */
  toEvents(drafts: readonly EventDraft[]): RunEvent[] {
    let seq = this.log.mustState().tail.seq;
    return drafts.map((draft): RunEvent => {
      seq += 1;
      return {
        seq,
        epoch: draft.epoch,
        source: draft.sourceSeq === undefined ? "control" : "runner",
        ...(draft.sourceSeq === undefined ? {} : { sourceSeq: draft.sourceSeq, generation: draft.generation ?? 1 }),
        type: draft.type,
        data: draft.data ?? null,
        time: new Date(draft.time).toISOString(),
        ...(draft.agentTime == null ? {} : { agentTime: new Date(draft.agentTime).toISOString() }),
      };
    });
  }

  /** Bytes the log holds: every stored event's JSON. */
  logBytes(): number {
    return this.log.mustState().tail.pos;
  }

  /**
   * Spends one claim of an allowance of `perMinute` claims a minute (a token bucket holding at
   * most `perMinute`, stored with the run): false, and nothing spent, when it is used up. A burst
   * of reconnects is allowed; a loop of them is held to the rate.
   */
  countClaim(now: number, perMinute: number): boolean {
    const row = this.sql
      .exec<{ tokens: number | null; at: number }>(
        "SELECT claim_tokens AS tokens, claim_tokens_at AS at FROM run WHERE singleton = 1",
      )
      .one();
    const refill = (Math.max(0, now - row.at) * perMinute) / 60_000;
    const tokens = Math.min(perMinute, (row.tokens ?? perMinute) + refill);
    if (tokens < 1) return false;
    this.sql.exec("UPDATE run SET claim_tokens = ?, claim_tokens_at = ? WHERE singleton = 1", tokens - 1, now);
    return true;
  }

  /**
   * Appends events at the next seqs in one pass. Runner events carry their sourceSeq and
   * generation; `runner` is that generation's producer state their verdicts accepted, recorded in
   * the same transaction. `events` are the drafts as toEvents made them, when the caller has them.
   */
  appendEvents(
    drafts: readonly EventDraft[],
    runner?: { generation: number; state: ProducerState },
    events: RunEvent[] = this.toEvents(drafts),
  ): RunEvent[] {
    this.log.appendTexts(
      events.map((event, index) => ({
        text: eventJson(event),
        time: (drafts[index] as EventDraft).time,
        producer:
          event.sourceSeq === undefined
            ? null
            : { producerId: generationProducer(event.generation ?? 1), epoch: event.epoch, seq: event.sourceSeq },
      })),
    );
    if (runner) {
      this.log.producers.record(generationProducer(runner.generation), runner.state, drafts[0]?.time ?? Date.now());
    }
    return events;
  }

  /** The stored runner event of `generation` at `sourceSeq`, to compare a resend with. */
  runnerEvent(generation: number, sourceSeq: number): { type: string; data: unknown } | null {
    const entry = this.log.entryForProducerSeq(generationProducer(generation), sourceSeq);
    if (!entry) return null;
    const { type, data } = decodeEvent(entry.body);
    return { type, data };
  }

  /**
   * Events with seq > `after`: at most `limit` of them and about `maxBytes` of JSON (one event
   * past the byte bound at most, so a page always makes progress). `hasMore` while the log goes on.
   */
  eventsAfter(after: number, limit: number, maxBytes: number): { events: RunEvent[]; hasMore: boolean } {
    const from = this.log.position(after);
    if (!from) return { events: [], hasMore: false };
    const page = this.log.read(from, { maxBytes, maxEntries: limit });
    return { events: page.entries.map((entry) => decodeEvent(entry.body)), hasMore: !page.upToDate };
  }

  /** Drops everything but the run row, which stays as a tombstone. */
  purge(now: number): void {
    this.log.clear();
    this.sql.exec("DELETE FROM commands");
    this.sql.exec("DELETE FROM approvals");
    this.sql.exec("DELETE FROM timers WHERE kind <> 'outbox'");
    this.sql.exec("DELETE FROM checkpoint_chunks");
    this.sql.exec("DELETE FROM checkpoint_uploads");
    this.sql.exec("DELETE FROM checkpoint");
    this.sql.exec("DELETE FROM recovery_decisions");
    // A purged run's tokens end with it, those minted before token ids included.
    this.sql.exec("DELETE FROM run_tokens");
    this.sql.exec(
      "UPDATE run SET purged_at = ?, agent = NULL, input = NULL, metadata = '{}', legacy_tokens_revoked_at = COALESCE(legacy_tokens_revoked_at, ?) WHERE singleton = 1",
      now,
      now,
    );
  }
}
