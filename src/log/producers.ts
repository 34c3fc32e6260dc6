import { lastStamp } from "./blocks.ts";

/**
 * Producer fencing: one writer identity, an epoch that fences older incarnations of it, and a
 * per-request sequence number that makes retries idempotent. The Durable Streams producer
 * (Producer-Id/Epoch/Seq) and a run's runner (claim epoch + sourceSeq) are both this.
 */

export interface ProducerClaim {
  producerId: string;
  epoch: number;
  seq: number;
}

export interface ProducerState {
  epoch: number;
  /** Highest accepted seq, or `firstSeq - 1` when nothing was accepted yet. */
  lastSeq: number;
}

export interface ProducerRules {
  /**
   * "client": the producer declares its epoch and may raise it (it must then restart at
   * `firstSeq`). "server": epochs are raised only by `ProducerTable.bump` (a run's claim), so a
   * claim from any other epoch is stale.
   */
  epochs: "client" | "server";
  /** "epoch": seq restarts at `firstSeq` in each epoch. "producer": seq runs on across epochs. */
  seqScope: "epoch" | "producer";
  firstSeq: number;
}

/** Durable Streams idempotent producers (PROTOCOL §5.2.1). */
export const STREAM_PRODUCER_RULES: ProducerRules = { epochs: "client", seqScope: "epoch", firstSeq: 0 };
/** A run's runner: epochs come from claims, sourceSeq counts from 1 for the life of the run. */
export const RUNNER_PRODUCER_RULES: ProducerRules = { epochs: "server", seqScope: "producer", firstSeq: 1 };

export type ProducerVerdict =
  /** Store it; `state` is what the producer row becomes once it is stored. */
  | { kind: "accepted"; state: ProducerState }
  /** Already stored: answer success, store nothing. `lastSeq` is the highest accepted seq. */
  | { kind: "duplicate"; lastSeq: number }
  /** Something is missing before this seq. */
  | { kind: "gap"; expected: number; received: number }
  /** A newer epoch owns this producer id. */
  | { kind: "stale_epoch"; current: number }
  /** A client raised its epoch without restarting its seq. */
  | { kind: "bad_epoch_start"; expected: number };

/** Classifies one claim against the producer's stored state (null: never seen). Pure. */
export function judgeProducer(
  state: ProducerState | null,
  claim: ProducerClaim,
  rules: ProducerRules,
): ProducerVerdict {
  const current: ProducerState = state ?? {
    epoch: rules.epochs === "client" ? claim.epoch : 0,
    lastSeq: rules.firstSeq - 1,
  };
  if (state === null && rules.epochs === "client") {
    // First contact: the client's epoch is established, its seq must start the epoch.
    if (claim.seq !== rules.firstSeq) return { kind: "gap", expected: rules.firstSeq, received: claim.seq };
    return { kind: "accepted", state: { epoch: claim.epoch, lastSeq: claim.seq } };
  }
  if (claim.epoch < current.epoch) return { kind: "stale_epoch", current: current.epoch };
  if (claim.epoch > current.epoch) {
    if (rules.epochs === "server") return { kind: "stale_epoch", current: current.epoch };
    const expected = rules.seqScope === "epoch" ? rules.firstSeq : current.lastSeq + 1;
    if (claim.seq !== expected) return { kind: "bad_epoch_start", expected };
    return { kind: "accepted", state: { epoch: claim.epoch, lastSeq: claim.seq } };
  }
  if (claim.seq <= current.lastSeq) return { kind: "duplicate", lastSeq: current.lastSeq };
  if (claim.seq > current.lastSeq + 1) return { kind: "gap", expected: current.lastSeq + 1, received: claim.seq };
  return { kind: "accepted", state: { epoch: current.epoch, lastSeq: claim.seq } };
}

export interface ProducerRead {
  row: ProducerState | null;
  state: ProducerState | null;
}

/**
 * A producer's state given its row and the last block's stamp of it. A stamp is newer than the
 * row when it has a later epoch, or the same epoch and a later seq (a server-side bump writes the
 * row with a later epoch than the stamps before it).
 */
function stateWith(row: ProducerState | null, epoch: number, seq: number): ProducerState | null {
  const newer = row === null || epoch > row.epoch || (epoch === row.epoch && seq > row.lastSeq);
  return newer ? { epoch, lastSeq: seq } : row;
}

interface RawProducer extends Record<string, SqlStorageValue> {
  epoch: number | null;
  last_seq: number | null;
  /** The last block's stamps, when that block is this producer's. */
  stamps: string | null;
}

/**
 * Producer rows in the log's SQLite tables. Callers hold the transaction.
 *
 * A producer's row is not rewritten on every append: its entries carry their stamps, so when the
 * log's last block is a producer's, that block's last stamp is the producer's state (an append
 * costs its block alone). The row is exact for every other producer: before a block of another
 * producer (or of none) is stored after one of P's, P's row is brought up to its stamps
 * (`settle`, called by LogCore.appendEach). So the state is always the row, or the last block's
 * stamp where it is newer — read from storage each time, nothing of it in memory.
 */
export class ProducerTable {
  private readonly sql: SqlStorage;
  readonly rules: ProducerRules;

  /** Reads remembered until the next write, when `memo` is on (LogCore's option). */
  private remembered: Map<string, ProducerRead> | null;

  constructor(sql: SqlStorage, rules: ProducerRules, memo = false) {
    this.sql = sql;
    this.rules = rules;
    this.remembered = memo ? new Map() : null;
  }

  /** Turns remembering on or off (LogCore.remembering); either way nothing remembered is kept. */
  remember(on: boolean): void {
    this.remembered = on ? new Map() : null;
  }

  /** Forgets what was remembered: the log was written. */
  forget(): void {
    this.remembered?.clear();
  }

  /**
   * The log was written and its last block is now stamped by `stamp`'s producer, up to `stamp`:
   * that producer's state is what readStored would answer, from its row as remembered `before`
   * the append (which writes no producer row). Everything else is forgotten.
   */
  appended(stamp: ProducerClaim, before: ProducerRead | undefined): void {
    this.forget();
    if (!before || !this.remembered) return;
    this.remembered.set(stamp.producerId, { row: before.row, state: stateWith(before.row, stamp.epoch, stamp.seq) });
  }

  /** What is remembered of `producerId`, if anything: its row, kept by appended() across an append. */
  known(producerId: string): ProducerRead | undefined {
    return this.remembered?.get(producerId);
  }

  /** The stored row and the state it stands for (the row, or the last block's newer stamp). */
  private read(producerId: string): ProducerRead {
    const known = this.remembered?.get(producerId);
    if (known) return known;
    const read = this.readStored(producerId);
    this.remembered?.set(producerId, read);
    return read;
  }

  private readStored(producerId: string): ProducerRead {
    const raw = this.sql
      .exec<RawProducer>(
        `SELECT p.epoch, p.last_seq, b.stamps FROM (SELECT ?1 AS id) q
         LEFT JOIN log_producers p ON p.producer_id = q.id
         LEFT JOIN (SELECT producer_id, stamps FROM log_blocks ORDER BY first_seq DESC LIMIT 1) b ON b.producer_id = q.id`,
        producerId,
      )
      .one();
    const row = raw.epoch === null ? null : { epoch: raw.epoch, lastSeq: raw.last_seq ?? 0 };
    const stamp = lastStamp(raw.stamps);
    return { row, state: stamp === null ? row : stateWith(row, stamp.epoch, stamp.seq) };
  }

  get(producerId: string): ProducerState | null {
    return this.read(producerId).state;
  }

  judge(claim: ProducerClaim): ProducerVerdict {
    return judgeProducer(this.get(claim.producerId), claim, this.rules);
  }

  /**
   * Records an accepted claim. Call in the same transaction as the append it guards, after it:
   * when the appended block's stamps already say `state`, nothing is written.
   */
  record(producerId: string, state: ProducerState, now: number): void {
    const current = this.get(producerId);
    if (current !== null && current.epoch === state.epoch && current.lastSeq === state.lastSeq) return;
    this.write(producerId, state, now);
  }

  /** Writes the row of `producerId` up to its stamps in the last block, when they are newer. */
  settle(producerId: string, now: number): void {
    const { row, state } = this.read(producerId);
    if (state !== null && state !== row) this.write(producerId, state, now);
  }

  /** Server-side epochs: opens the next epoch for `producerId` (a run claim) and returns it. */
  bump(producerId: string, now: number): ProducerState {
    const state = this.get(producerId) ?? { epoch: 0, lastSeq: this.rules.firstSeq - 1 };
    const next: ProducerState = {
      epoch: state.epoch + 1,
      lastSeq: this.rules.seqScope === "epoch" ? this.rules.firstSeq - 1 : state.lastSeq,
    };
    this.write(producerId, next, now);
    return next;
  }

  private write(producerId: string, state: ProducerState, now: number): void {
    this.forget();
    this.sql.exec(
      `INSERT INTO log_producers (producer_id, epoch, last_seq, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (producer_id) DO UPDATE SET epoch = excluded.epoch, last_seq = excluded.last_seq, updated_at = excluded.updated_at`,
      producerId,
      state.epoch,
      state.lastSeq,
      now,
    );
  }
}
