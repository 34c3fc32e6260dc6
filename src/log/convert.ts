import { type BlockEntry, writeBlocks } from "./blocks.ts";
import { LOG_START, type LogPosition } from "./offsets.ts";

/** One row of `log_entries`, the layout before blocks: one entry per row with its stamp. */
export interface EntryRow extends Record<string, SqlStorageValue> {
  seq: number;
  end_pos: number;
  body: ArrayBuffer;
  time: number;
  producer_id: string | null;
  producer_epoch: number | null;
  producer_seq: number | null;
}

/** Entries read per statement while converting, so a long log is not held in memory at once. */
const CHUNK_ENTRIES = 4096;

/**
 * Moves a log stored a row per entry (`log_entries`, before blocks) into blocks, byte for byte:
 * every body, end position, time and producer stamp kept, runs of consecutive entries packed up
 * to the block bounds. The old table's frame boundaries were never stored, so blocks here follow
 * the bounds only. Runs inside the migration's transaction; a log that is already converted (no
 * `log_entries`) is left alone.
 */
export function convertEntriesToBlocks(sql: SqlStorage): void {
  const exists = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'log_entries'").toArray().length;
  if (exists === 0) return;
  let tail: LogPosition = LOG_START;
  for (;;) {
    const rows = sql
      .exec<EntryRow>("SELECT * FROM log_entries WHERE seq > ? ORDER BY seq LIMIT ?", tail.seq, CHUNK_ENTRIES)
      .toArray();
    if (rows.length === 0) break;
    const entries: BlockEntry[] = [];
    let pos = tail.pos;
    for (const row of rows) {
      const body = new Uint8Array(row.body);
      pos += body.byteLength;
      if (row.seq !== tail.seq + entries.length + 1 || row.end_pos !== pos)
        throw new Error(`log entry ${row.seq} does not follow the entry before it`);
      entries.push({
        body,
        time: row.time,
        producer:
          row.producer_id === null
            ? null
            : { producerId: row.producer_id, epoch: row.producer_epoch ?? 0, seq: row.producer_seq ?? 0 },
      });
    }
    tail = writeBlocks(sql, tail, entries);
  }
  sql.exec("DROP TABLE log_entries");
}
