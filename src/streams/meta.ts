/** What a new stream is created with. */
export interface NewStream {
  tenant: string;
  path: string;
  contentType: string;
  ttlSeconds: number | null;
  expiresAt: string | null;
  expiresAtMs: number | null;
}

/** A stream's configuration row (stream_meta) and the rules derived from it. */
export interface Meta extends NewStream {
  streamId: string;
  touchedAt: number;
  writerSeq: string | null;
}

interface RawMeta extends Record<string, SqlStorageValue> {
  stream_id: string;
  tenant: string;
  path: string;
  content_type: string;
  ttl_seconds: number | null;
  expires_at: string | null;
  expires_at_ms: number | null;
  touched_at: number;
  writer_seq: string | null;
}

export function readMeta(sql: SqlStorage): Meta | null {
  const row = sql.exec<RawMeta>("SELECT * FROM stream_meta WHERE singleton = 1").toArray()[0];
  return row ? metaOf(row) : null;
}

/**
 * The configuration row and whether the stream is soft-deleted (its stream_tombstone row, in
 * fork-tables.ts), in one statement: what every append and read looks at first.
 */
export function readMetaAndTombstone(sql: SqlStorage): { meta: Meta; tombstoned: boolean } | null {
  const row = sql
    .exec<RawMeta & { tombstoned: number }>(
      `SELECT m.*, EXISTS (SELECT 1 FROM stream_tombstone WHERE singleton = 1) AS tombstoned
       FROM stream_meta m WHERE m.singleton = 1`,
    )
    .toArray()[0];
  return row ? { meta: metaOf(row), tombstoned: row.tombstoned === 1 } : null;
}

function metaOf(row: RawMeta): Meta {
  return {
    streamId: row.stream_id,
    tenant: row.tenant,
    path: row.path,
    contentType: row.content_type,
    ttlSeconds: row.ttl_seconds,
    expiresAt: row.expires_at,
    expiresAtMs: row.expires_at_ms,
    touchedAt: row.touched_at,
    writerSeq: row.writer_seq,
  };
}

/** Starts a new incarnation of the stream: a fresh stream id, so old ETags never match it. */
export function insertMeta(sql: SqlStorage, stream: NewStream, now: number): void {
  sql.exec(
    `INSERT INTO stream_meta (singleton, stream_id, tenant, path, content_type, ttl_seconds, expires_at, expires_at_ms, created_at, touched_at)
     VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    crypto.randomUUID(),
    stream.tenant,
    stream.path,
    stream.contentType,
    stream.ttlSeconds,
    stream.expiresAt,
    stream.expiresAtMs,
    now,
    now,
  );
}

/** When the stream expires: a sliding TTL from the last read or write, or an absolute time. */
export function deadline(meta: Meta): number | null {
  const candidates: number[] = [];
  if (meta.ttlSeconds !== null) candidates.push(meta.touchedAt + meta.ttlSeconds * 1000);
  if (meta.expiresAtMs !== null) candidates.push(meta.expiresAtMs);
  return candidates.length === 0 ? null : Math.min(...candidates);
}

/** Reads and writes restart a sliding TTL. */
export function touchMeta(sql: SqlStorage, now: number): void {
  sql.exec("UPDATE stream_meta SET touched_at = ? WHERE singleton = 1", now);
}

/** The last accepted Stream-Seq (writer coordination). */
export function setWriterSeq(sql: SqlStorage, writerSeq: string): void {
  sql.exec("UPDATE stream_meta SET writer_seq = ? WHERE singleton = 1", writerSeq);
}

export function deleteMeta(sql: SqlStorage): void {
  sql.exec("DELETE FROM stream_meta");
}
