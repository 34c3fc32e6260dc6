import type { EventSource, Outcome, RunEvent, RunStatus, Timeouts } from "../protocol/index.ts";

/** The single row describing the run. */
export interface RunRow {
  tenant: string;
  runId: string;
  fingerprint: string;
  status: RunStatus;
  epoch: number;
  createdAt: number;
  claimedAt: number | null;
  finishedAt: number | null;
  purgedAt: number | null;
  lastSeq: number;
  highestSourceSeq: number;
  controllerSeq: number;
  runnerId: string | null;
  outcome: Outcome | null;
  agent: unknown;
  input: unknown;
  metadata: Record<string, unknown>;
  timeouts: Timeouts;
  retentionMs: number;
}

interface RawRun extends Record<string, SqlStorageValue> {
  tenant: string;
  run_id: string;
  fingerprint: string;
  status: string;
  epoch: number;
  created_at: number;
  claimed_at: number | null;
  finished_at: number | null;
  purged_at: number | null;
  last_seq: number;
  highest_source_seq: number;
  controller_seq: number;
  runner_id: string | null;
  outcome: string | null;
  agent: string | null;
  input: string | null;
  metadata: string;
  timeouts: string;
  retention_ms: number;
}

interface RawEvent extends Record<string, SqlStorageValue> {
  seq: number;
  epoch: number;
  source: string;
  source_seq: number | null;
  type: string;
  data: string;
  time: number;
}

const parseOrNull = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

export function toRunEvent(row: RawEvent): RunEvent {
  const event: RunEvent = {
    seq: row.seq,
    epoch: row.epoch,
    source: row.source as EventSource,
    type: row.type,
    data: JSON.parse(row.data),
    time: new Date(row.time).toISOString(),
  };
  if (row.source_seq !== null) event.sourceSeq = row.source_seq;
  return event;
}

/** Typed access to the run row and its event log. Callers hold the transaction. */
export class RunStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  load(): RunRow | null {
    const raw = this.sql.exec<RawRun>("SELECT * FROM run WHERE singleton = 1").toArray()[0];
    if (!raw) return null;
    return {
      tenant: raw.tenant,
      runId: raw.run_id,
      fingerprint: raw.fingerprint,
      status: raw.status as RunStatus,
      epoch: raw.epoch,
      createdAt: raw.created_at,
      claimedAt: raw.claimed_at,
      finishedAt: raw.finished_at,
      purgedAt: raw.purged_at,
      lastSeq: raw.last_seq,
      highestSourceSeq: raw.highest_source_seq,
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

  insert(run: RunRow): void {
    this.sql.exec(
      `INSERT INTO run (singleton, tenant, run_id, fingerprint, status, epoch, created_at, agent, input, metadata, timeouts, retention_ms)
       VALUES (1, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`,
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
  }

  setStatus(status: RunStatus): void {
    this.sql.exec("UPDATE run SET status = ? WHERE singleton = 1", status);
  }

  claim(epoch: number, runnerId: string, now: number): void {
    this.sql.exec(
      "UPDATE run SET epoch = ?, runner_id = ?, claimed_at = ? WHERE singleton = 1",
      epoch,
      runnerId,
      now,
    );
  }

  finish(outcome: Outcome, now: number): void {
    this.sql.exec(
      "UPDATE run SET status = ?, outcome = ?, finished_at = ? WHERE singleton = 1",
      outcome.status,
      JSON.stringify(outcome),
      now,
    );
  }

  nextControllerSeq(): number {
    return this.sql
      .exec<{ controller_seq: number }>(
        "UPDATE run SET controller_seq = controller_seq + 1 WHERE singleton = 1 RETURNING controller_seq",
      )
      .one().controller_seq;
  }

  /** Appends one event at the next seq; runner events also advance highest_source_seq. */
  append(event: { epoch: number; source: EventSource; sourceSeq?: number; type: string; data: unknown; time: number }): RunEvent {
    const { last_seq: seq } = this.sql
      .exec<{ last_seq: number }>("UPDATE run SET last_seq = last_seq + 1 WHERE singleton = 1 RETURNING last_seq")
      .one();
    if (event.sourceSeq !== undefined) {
      this.sql.exec("UPDATE run SET highest_source_seq = ? WHERE singleton = 1", event.sourceSeq);
    }
    const data = JSON.stringify(event.data ?? null);
    this.sql.exec(
      "INSERT INTO events (seq, epoch, source, source_seq, type, data, time) VALUES (?, ?, ?, ?, ?, ?, ?)",
      seq,
      event.epoch,
      event.source,
      event.sourceSeq ?? null,
      event.type,
      data,
      event.time,
    );
    return toRunEvent({
      seq,
      epoch: event.epoch,
      source: event.source,
      source_seq: event.sourceSeq ?? null,
      type: event.type,
      data,
      time: event.time,
    });
  }

  runnerEvent(sourceSeq: number): { type: string; data: unknown } | null {
    const row = this.sql
      .exec<{ type: string; data: string }>("SELECT type, data FROM events WHERE source_seq = ?", sourceSeq)
      .toArray()[0];
    return row ? { type: row.type, data: JSON.parse(row.data) } : null;
  }

  eventsAfter(after: number, limit: number): RunEvent[] {
    return this.sql
      .exec<RawEvent>("SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", after, limit)
      .toArray()
      .map(toRunEvent);
  }

  /** Drops everything but the run row, which stays as a tombstone. */
  purge(now: number): void {
    this.sql.exec("DELETE FROM events");
    this.sql.exec("DELETE FROM commands");
    this.sql.exec("DELETE FROM approvals");
    this.sql.exec("DELETE FROM timers");
    this.sql.exec(
      "UPDATE run SET purged_at = ?, agent = NULL, input = NULL, metadata = '{}' WHERE singleton = 1",
      now,
    );
  }
}
