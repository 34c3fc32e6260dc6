import { LogCore } from "../log/log.ts";
import { type ProducerState, RUNNER_PRODUCER_RULES } from "../log/producers.ts";
import type { Outcome, RunEvent, RunStatus, Timeouts } from "../protocol/index.ts";
import { ClaimEpoch, RUNNER_PRODUCER } from "./claim-epoch.ts";

/** The single row describing the run, with what the log core knows of it. */
export interface RunRow {
  tenant: string;
  runId: string;
  fingerprint: string;
  status: RunStatus;
  /** The claim epoch (src/run/claim-epoch.ts): 0 until the first claim. */
  epoch: number;
  createdAt: number;
  claimedAt: number | null;
  finishedAt: number | null;
  purgedAt: number | null;
  /** The log's tail: the seq of the last event. */
  lastSeq: number;
  /** The runner producer's last accepted sourceSeq; stored sourceSeqs are always 1..this. */
  highestSourceSeq: number;
  controllerSeq: number;
  /** The runnerId of the newest claim. */
  runnerId: string | null;
  outcome: Outcome | null;
  agent: unknown;
  input: unknown;
  metadata: Record<string, unknown>;
  timeouts: Timeouts;
  retentionMs: number;
}

export type NewRun = Omit<
  RunRow,
  | "epoch"
  | "lastSeq"
  | "highestSourceSeq"
  | "controllerSeq"
  | "claimedAt"
  | "finishedAt"
  | "purgedAt"
  | "runnerId"
  | "outcome"
>;

interface RawRun extends Record<string, SqlStorageValue> {
  tenant: string;
  run_id: string;
  fingerprint: string;
  status: string;
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
  timeouts: string;
  retention_ms: number;
}

/** An event before it has a seq: a control event, or a runner event with its sourceSeq. */
export interface EventDraft {
  epoch: number;
  sourceSeq?: number;
  type: string;
  data: unknown;
  time: number;
}

const decoder = new TextDecoder();
const parseOrNull = (text: string | null): unknown => (text === null ? null : JSON.parse(text));
const ALL_BYTES = Number.MAX_SAFE_INTEGER;

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
    const runner = this.log.producers.get(RUNNER_PRODUCER);
    return {
      tenant: raw.tenant,
      runId: raw.run_id,
      fingerprint: raw.fingerprint,
      status: raw.status as RunStatus,
      epoch: this.claimEpoch.current(),
      createdAt: raw.created_at,
      claimedAt: raw.claimed_at,
      finishedAt: raw.finished_at,
      purgedAt: raw.purged_at,
      lastSeq: this.log.state()?.tail.seq ?? 0,
      highestSourceSeq: runner?.lastSeq ?? 0,
      controllerSeq: raw.controller_seq,
      runnerId: raw.runner_id,
      outcome: parseOrNull(raw.outcome) as Outcome | null,
      agent: parseOrNull(raw.agent),
      input: parseOrNull(raw.input),
      metadata: JSON.parse(raw.metadata) as Record<string, unknown>,
      timeouts: JSON.parse(raw.timeouts) as Timeouts,
      retentionMs: raw.retention_ms,
    };
  }

  insert(run: NewRun): void {
    this.sql.exec(
      `INSERT INTO run (singleton, tenant, run_id, fingerprint, status, created_at, agent, input, metadata, timeouts, retention_ms)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    );
    this.log.init();
  }

  setStatus(status: RunStatus): void {
    this.sql.exec("UPDATE run SET status = ? WHERE singleton = 1", status);
  }

  /** Records a new claim by `runnerId`: the next claim epoch, which it returns. */
  claim(runnerId: string, now: number): number {
    const epoch = this.claimEpoch.increment(now);
    this.sql.exec("UPDATE run SET runner_id = ?, claimed_at = ? WHERE singleton = 1", runnerId, now);
    return epoch;
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

  /** The runner producer's state: its epoch and last accepted sourceSeq (null before any claim). */
  runnerState(): ProducerState | null {
    return this.log.producers.get(RUNNER_PRODUCER);
  }

  /** Appends one control event at the next seq. */
  append(event: EventDraft): RunEvent {
    return this.appendEvents([event])[0] as RunEvent;
  }

  /**
   * Appends events at the next seqs in one pass. Runner events carry their sourceSeq; `runner`
   * is the producer state their verdicts accepted, recorded in the same transaction.
   */
  appendEvents(drafts: readonly EventDraft[], runner?: ProducerState): RunEvent[] {
    let seq = this.log.mustState().tail.seq;
    const events = drafts.map((draft): RunEvent => {
      seq += 1;
      return {
        seq,
        epoch: draft.epoch,
        source: draft.sourceSeq === undefined ? "control" : "runner",
        ...(draft.sourceSeq === undefined ? {} : { sourceSeq: draft.sourceSeq }),
        type: draft.type,
        data: draft.data ?? null,
        time: new Date(draft.time).toISOString(),
      };
    });
    this.log.appendTexts(
      events.map((event, index) => ({
        text: eventJson(event),
        time: (drafts[index] as EventDraft).time,
        producer:
          event.sourceSeq === undefined
            ? null
            : { producerId: RUNNER_PRODUCER, epoch: event.epoch, seq: event.sourceSeq },
      })),
    );
    if (runner) this.log.producers.record(RUNNER_PRODUCER, runner, drafts[0]?.time ?? Date.now());
    return events;
  }

  runnerEvent(sourceSeq: number): { type: string; data: unknown } | null {
    const entry = this.log.entryForProducerSeq(RUNNER_PRODUCER, sourceSeq);
    if (!entry) return null;
    const { type, data } = decodeEvent(entry.body);
    return { type, data };
  }

  eventsAfter(after: number, limit: number): RunEvent[] {
    const from = this.log.position(after);
    if (!from) return [];
    return this.log
      .read(from, { maxBytes: ALL_BYTES, maxEntries: limit })
      .entries.map((entry) => decodeEvent(entry.body));
  }

  /** Drops everything but the run row, which stays as a tombstone. */
  purge(now: number): void {
    this.log.clear();
    this.sql.exec("DELETE FROM commands");
    this.sql.exec("DELETE FROM approvals");
    this.sql.exec("DELETE FROM timers");
    this.sql.exec("UPDATE run SET purged_at = ?, agent = NULL, input = NULL, metadata = '{}' WHERE singleton = 1", now);
  }
}
