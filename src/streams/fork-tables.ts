/**
 * The fork bookkeeping of one StreamObject over its SQLite tables (src/objects/stream-schema.ts).
 * Synchronous; callers hold the transaction.
 */

export interface Lineage {
  tenant: string;
  sourcePath: string;
  forkRef: string;
  /** The resolved fork offset token; null until the source has answered. */
  forkOffset: string | null;
  subOffset: number;
  /** The fork took its TTL/expiry from the source because the PUT named none. */
  expiryInherited: boolean;
  copying: boolean;
  startedAt: number;
}

export interface PendingRelease {
  forkRef: string;
  tenant: string;
  sourcePath: string;
}

/** One append's extent in entries (only multi-entry appends are recorded). */
export interface AppendSpan {
  first: number;
  last: number;
}

interface RawLineage extends Record<string, SqlStorageValue> {
  tenant: string;
  source_path: string;
  fork_ref: string;
  fork_offset: string | null;
  sub_offset: number;
  expiry_inherited: number;
  copying: number;
  started_at: number;
}

export class ForkTables {
  private readonly sql: SqlStorage;
  /**
   * False once stream_releases was read empty with nothing queued since: every append and read
   * settles releases (StreamObject.settle), and nearly every stream has none, so the read is skipped.
   */
  private releasesMayBePending = true;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  // ---- this stream as a fork ---------------------------------------------------------------

  lineage(): Lineage | null {
    const row = this.sql.exec<RawLineage>("SELECT * FROM stream_lineage WHERE singleton = 1").toArray()[0];
    if (!row) return null;
    return {
      tenant: row.tenant,
      sourcePath: row.source_path,
      forkRef: row.fork_ref,
      forkOffset: row.fork_offset,
      subOffset: row.sub_offset,
      expiryInherited: row.expiry_inherited === 1,
      copying: row.copying === 1,
      startedAt: row.started_at,
    };
  }

  startLineage(lineage: Omit<Lineage, "forkOffset" | "expiryInherited" | "copying">): void {
    this.sql.exec(
      `INSERT INTO stream_lineage (singleton, tenant, source_path, fork_ref, fork_offset, sub_offset, expiry_inherited, copying, started_at)
       VALUES (1, ?, ?, ?, NULL, ?, 0, 1, ?)`,
      lineage.tenant,
      lineage.sourcePath,
      lineage.forkRef,
      lineage.subOffset,
      lineage.startedAt,
    );
  }

  finishLineage(forkOffset: string, expiryInherited: boolean): void {
    this.sql.exec(
      "UPDATE stream_lineage SET fork_offset = ?, expiry_inherited = ?, copying = 0 WHERE singleton = 1",
      forkOffset,
      expiryInherited ? 1 : 0,
    );
  }

  /** Forgets the lineage and queues the release of its reference on the source. */
  dropLineage(now: number): void {
    const lineage = this.lineage();
    if (!lineage) return;
    this.sql.exec("DELETE FROM stream_lineage");
    this.releasesMayBePending = true;
    this.sql.exec(
      "INSERT OR IGNORE INTO stream_releases (fork_ref, tenant, source_path, queued_at) VALUES (?, ?, ?, ?)",
      lineage.forkRef,
      lineage.tenant,
      lineage.sourcePath,
      now,
    );
  }

  // ---- this stream as a source -------------------------------------------------------------

  addRef(forkRef: string, forkPath: string, now: number): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO stream_fork_refs (fork_ref, fork_path, created_at) VALUES (?, ?, ?)",
      forkRef,
      forkPath,
      now,
    );
  }

  hasRef(forkRef: string): boolean {
    return this.sql.exec("SELECT 1 FROM stream_fork_refs WHERE fork_ref = ?", forkRef).toArray().length > 0;
  }

  removeRef(forkRef: string): void {
    this.sql.exec("DELETE FROM stream_fork_refs WHERE fork_ref = ?", forkRef);
  }

  refCount(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM stream_fork_refs").one().n;
  }

  tombstoned(): boolean {
    return this.sql.exec("SELECT 1 FROM stream_tombstone WHERE singleton = 1").toArray().length > 0;
  }

  tombstone(now: number): void {
    this.sql.exec("INSERT OR IGNORE INTO stream_tombstone (singleton, deleted_at) VALUES (1, ?)", now);
  }

  // ---- append extents ----------------------------------------------------------------------

  recordAppend(first: number, last: number): void {
    if (last > first)
      this.sql.exec("INSERT OR REPLACE INTO stream_appends (first_seq, last_seq) VALUES (?, ?)", first, last);
  }

  /** The last entry of the append that holds entry `seq` (the entry itself when not recorded). */
  appendEnd(seq: number): number {
    const row = this.sql
      .exec<{ last_seq: number }>(
        "SELECT last_seq FROM stream_appends WHERE first_seq <= ? ORDER BY first_seq DESC LIMIT 1",
        seq,
      )
      .toArray()[0];
    return row && row.last_seq >= seq ? row.last_seq : seq;
  }

  /** Recorded appends starting in (after, through], their ends capped at `cap`. */
  appendsStarting(after: number, through: number, cap: number): AppendSpan[] {
    return this.sql
      .exec<{ first_seq: number; last_seq: number }>(
        "SELECT first_seq, last_seq FROM stream_appends WHERE first_seq > ? AND first_seq <= ? ORDER BY first_seq",
        after,
        through,
      )
      .toArray()
      .map((row) => ({ first: row.first_seq, last: Math.min(row.last_seq, cap) }));
  }

  // ---- releases owed to sources ------------------------------------------------------------

  pendingReleases(): PendingRelease[] {
    if (!this.releasesMayBePending) return [];
    const pending = this.sql
      .exec<{ fork_ref: string; tenant: string; source_path: string }>(
        "SELECT fork_ref, tenant, source_path FROM stream_releases ORDER BY queued_at",
      )
      .toArray()
      .map((row) => ({ forkRef: row.fork_ref, tenant: row.tenant, sourcePath: row.source_path }));
    if (pending.length === 0) this.releasesMayBePending = false;
    return pending;
  }

  released(forkRef: string): void {
    this.sql.exec("DELETE FROM stream_releases WHERE fork_ref = ?", forkRef);
  }

  /** Everything but the release outbox, which outlives the stream. */
  clear(): void {
    this.sql.exec("DELETE FROM stream_appends");
    this.sql.exec("DELETE FROM stream_fork_refs");
    this.sql.exec("DELETE FROM stream_tombstone");
  }
}
