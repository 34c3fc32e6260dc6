import { Deadlines } from "./deadlines.ts";

/**
 * Notifications from a run to other objects, as rows of its `outbox` table. A row is added in the
 * same transaction as the change it reports, together with an `outbox` timer, so a crash right
 * after the commit loses nothing: the alarm delivers it. Delivery goes in `seq` order, stops at
 * the first failure (a later notification never overtakes an earlier one) and deletes a row only
 * once its target acknowledged it; targets take a repeat as a no-op (by `seq` and `dedupeKey`).
 * A target is a name in the deliverers table the object passes in (src/pools/deliver.ts), so
 * any notification to another object (a webhook, say) is a new target, not a new mechanism.
 */
export interface OutboxRow {
  seq: number;
  target: string;
  dedupeKey: string;
  body: unknown;
  attempts: number;
}

/** Delivers one row; throws (or rejects) when the target did not acknowledge it. */
export type Deliver = (row: OutboxRow) => Promise<void>;

/** The first retry after a failed delivery, doubling to at most MAX_RETRY_MS. */
export const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;

export function retryDelay(attempts: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
}

/**
 * What a run's operations add to the outbox, inside their transaction: the one way in. The object
 * flushes after the commit when `added` (operations.ts).
 */
export class OutboxNotices {
  private readonly outbox: Outbox;
  private readonly now: number;
  private addedAny = false;

  constructor(sql: SqlStorage, now: number) {
    this.outbox = new Outbox(sql);
    this.now = now;
  }

  /** Adds a notification for `target` unless one with the same key exists. */
  add(target: string, dedupeKey: string, body: unknown): void {
    this.outbox.add(target, dedupeKey, body, this.now);
    this.addedAny = true;
  }

  /** Whether this operation added a notification: its caller then flushes. */
  get added(): boolean {
    return this.addedAny;
  }
}

/** Delivers what is pending (Outbox.flush); called with no transaction open. */
export function flushOutbox(
  sql: SqlStorage,
  deliver: Deliver,
  now: () => number,
): Promise<{ delivered: number; failed: boolean }> {
  return new Outbox(sql).flush(deliver, now);
}

/** The outbox table. Exported for tests; the edge reaches it only through the functions above. */
export class Outbox {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** Adds a notification unless one with the same key exists; arms the retry timer. Inside the change's transaction. */
  add(target: string, dedupeKey: string, body: unknown, now: number): void {
    this.sql.exec(
      "INSERT INTO outbox (target, dedupe_key, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (dedupe_key) DO NOTHING",
      target,
      dedupeKey,
      JSON.stringify(body),
      now,
    );
    new Deadlines(this.sql).armOutboxUnlessArmed(now + FIRST_RETRY_MS);
  }

  pending(limit = 100): OutboxRow[] {
    return this.sql
      .exec<{ seq: number; target: string; dedupe_key: string; body: string; attempts: number }>(
        "SELECT seq, target, dedupe_key, body, attempts FROM outbox ORDER BY seq LIMIT ?",
        limit,
      )
      .toArray()
      .map((row) => ({
        seq: row.seq,
        target: row.target,
        dedupeKey: row.dedupe_key,
        body: JSON.parse(row.body),
        attempts: row.attempts,
      }));
  }

  size(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n;
  }

  /**
   * Delivers what is pending, in order, until the outbox is empty or a delivery fails. Each
   * acknowledgement deletes its row; a failure counts an attempt and moves the retry timer out.
   * Call with no transaction open: every step commits on its own.
   */
  async flush(deliver: Deliver, now: () => number): Promise<{ delivered: number; failed: boolean }> {
    const deadlines = new Deadlines(this.sql);
    let delivered = 0;
    // Should this object die mid-delivery, the alarm tries again after a pause, not at once.
    deadlines.armOutbox(now() + FIRST_RETRY_MS);
    for (;;) {
      const batch = this.pending();
      if (batch.length === 0) {
        deadlines.disarmOutbox();
        return { delivered, failed: false };
      }
      for (const row of batch) {
        try {
          await deliver(row);
        } catch (error) {
          const attempts = row.attempts + 1;
          this.sql.exec(
            "UPDATE outbox SET attempts = ?, last_error = ? WHERE seq = ?",
            attempts,
            String(error).slice(0, 1000),
            row.seq,
          );
          deadlines.armOutbox(now() + retryDelay(attempts));
          return { delivered, failed: true };
        }
        this.sql.exec("DELETE FROM outbox WHERE seq = ?", row.seq);
        delivered += 1;
      }
    }
  }
}
