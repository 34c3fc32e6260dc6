/**
 * Every deadline of a run lives in the timers table; the object keeps one alarm set to the
 * earliest of them. The table row is the truth: a handler acts on a due row and deletes it.
 */
export type TimerKind =
  | "claim"
  | "lease"
  | "takeover"
  | "recover"
  | "approval"
  | "idle"
  | "deadline"
  | "cancel_grace"
  | "retention"
  | "index_sync"
  /** The outbox has notifications not yet acknowledged (outbox.ts). */
  | "outbox";

export interface Timer {
  kind: TimerKind;
  ref: string;
  dueAt: number;
}

export class Timers {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  set(kind: TimerKind, dueAt: number, ref = ""): void {
    this.sql.exec(
      "INSERT INTO timers (kind, ref, due_at) VALUES (?, ?, ?) ON CONFLICT (kind, ref) DO UPDATE SET due_at = excluded.due_at",
      kind,
      ref,
      dueAt,
    );
  }

  clear(kind: TimerKind, ref = ""): void {
    this.sql.exec("DELETE FROM timers WHERE kind = ? AND ref = ?", kind, ref);
  }

  clearAllExcept(keep: TimerKind[]): void {
    const placeholders = keep.map(() => "?").join(", ");
    this.sql.exec(`DELETE FROM timers WHERE kind NOT IN (${placeholders})`, ...keep);
  }

  get(kind: TimerKind, ref = ""): number | null {
    const row = this.sql
      .exec<{ due_at: number }>("SELECT due_at FROM timers WHERE kind = ? AND ref = ?", kind, ref)
      .toArray()[0];
    return row ? row.due_at : null;
  }

  due(now: number): Timer[] {
    return this.sql
      .exec<{ kind: string; ref: string; due_at: number }>(
        "SELECT kind, ref, due_at FROM timers WHERE due_at <= ? ORDER BY due_at, kind, ref",
        now,
      )
      .toArray()
      .map((row) => ({ kind: row.kind as TimerKind, ref: row.ref, dueAt: row.due_at }));
  }

  earliest(): number | null {
    const row = this.sql.exec<{ due: number | null }>("SELECT MIN(due_at) AS due FROM timers").one();
    return row.due;
  }
}
