import type { CheckpointInfo } from "../protocol/index.ts";

/** The current checkpoint, with the upload whose chunks hold its bytes. */
export interface StoredCheckpoint {
  uploadId: string;
  info: CheckpointInfo;
}

interface RawCheckpoint extends Record<string, SqlStorageValue> {
  upload_id: string;
  digest: string;
  generation: number;
  source_seq: number;
  bytes: number;
  created_at: number;
}

interface RawUpload extends Record<string, SqlStorageValue> {
  upload_id: string;
  max_bytes: number;
  bytes: number;
  chunks: number;
}

/**
 * The run's checkpoint in its SQLite: a `checkpoint` row naming an upload, and that upload's
 * chunks (at most 1 MiB each, under the 2 MB row limit). An upload writes its chunks under its
 * own id beside the current checkpoint's; `commit` swaps them in one transaction, so the
 * checkpoint readers see is always whole, and a refused or abandoned upload replaces nothing.
 * One upload at a time: starting one drops any other unfinished one (a bridge that died mid-way).
 */
export class CheckpointStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  current(): StoredCheckpoint | null {
    const row = this.sql.exec<RawCheckpoint>("SELECT * FROM checkpoint WHERE singleton = 1").toArray()[0];
    if (!row) return null;
    return {
      uploadId: row.upload_id,
      info: {
        digest: row.digest,
        generation: row.generation,
        sourceSeq: row.source_seq,
        bytes: row.bytes,
        createdAt: new Date(row.created_at).toISOString(),
      },
    };
  }

  /** The same bytes again: only what they cover moves (never backwards within a generation). */
  cover(generation: number, sourceSeq: number): void {
    this.sql.exec(
      `UPDATE checkpoint SET source_seq = CASE WHEN generation = ? THEN MAX(source_seq, ?) ELSE ? END,
       generation = ? WHERE singleton = 1`,
      generation,
      sourceSeq,
      sourceSeq,
      generation,
    );
  }

  begin(uploadId: string, maxBytes: number, now: number): void {
    this.dropUnfinished();
    this.sql.exec(
      "INSERT INTO checkpoint_uploads (upload_id, max_bytes, started_at) VALUES (?, ?, ?)",
      uploadId,
      maxBytes,
      now,
    );
  }

  upload(uploadId: string): { bytes: number; chunks: number; maxBytes: number } | null {
    const row = this.sql.exec<RawUpload>("SELECT * FROM checkpoint_uploads WHERE upload_id = ?", uploadId).toArray()[0];
    return row ? { bytes: row.bytes, chunks: row.chunks, maxBytes: row.max_bytes } : null;
  }

  /** Adds the upload's next chunk. The caller has checked its index and the size bound. */
  addChunk(uploadId: string, index: number, body: Uint8Array): void {
    this.sql.exec(
      "INSERT INTO checkpoint_chunks (upload_id, idx, body) VALUES (?, ?, ?)",
      uploadId,
      index,
      body.slice().buffer,
    );
    this.sql.exec(
      "UPDATE checkpoint_uploads SET bytes = bytes + ?, chunks = chunks + 1 WHERE upload_id = ?",
      body.byteLength,
      uploadId,
    );
  }

  /** Makes the upload the checkpoint, dropping the previous one's chunks. */
  commit(uploadId: string, info: Omit<CheckpointInfo, "createdAt">, now: number): CheckpointInfo {
    const previous = this.current();
    if (previous) this.sql.exec("DELETE FROM checkpoint_chunks WHERE upload_id = ?", previous.uploadId);
    this.sql.exec("DELETE FROM checkpoint_uploads WHERE upload_id = ?", uploadId);
    this.sql.exec(
      `INSERT INTO checkpoint (singleton, upload_id, digest, generation, source_seq, bytes, created_at)
       VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT (singleton) DO UPDATE SET upload_id = excluded.upload_id,
       digest = excluded.digest, generation = excluded.generation, source_seq = excluded.source_seq,
       bytes = excluded.bytes, created_at = excluded.created_at`,
      uploadId,
      info.digest,
      info.generation,
      info.sourceSeq,
      info.bytes,
      now,
    );
    return (this.current() as StoredCheckpoint).info;
  }

  abort(uploadId: string): void {
    this.sql.exec("DELETE FROM checkpoint_chunks WHERE upload_id = ?", uploadId);
    this.sql.exec("DELETE FROM checkpoint_uploads WHERE upload_id = ?", uploadId);
  }

  chunk(uploadId: string, index: number): Uint8Array | null {
    const row = this.sql
      .exec<{ body: ArrayBuffer }>(
        "SELECT body FROM checkpoint_chunks WHERE upload_id = ? AND idx = ?",
        uploadId,
        index,
      )
      .toArray()[0];
    return row ? new Uint8Array(row.body) : null;
  }

  chunkCount(uploadId: string): number {
    return this.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM checkpoint_chunks WHERE upload_id = ?", uploadId)
      .one().n;
  }

  private dropUnfinished(): void {
    this.sql.exec("DELETE FROM checkpoint_chunks WHERE upload_id IN (SELECT upload_id FROM checkpoint_uploads)");
    this.sql.exec("DELETE FROM checkpoint_uploads");
  }
}
