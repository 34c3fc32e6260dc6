import type { EntryRow } from "../../src/log/convert.ts";
import { LOG_ENTRIES_TABLE } from "../../src/log/schema.ts";
/**
 * A log core's entries as rows, one per entry, decoded from its blocks (src/log/blocks.ts): what
 * tests compare stored data with, whatever the layout.
 */
export type StoredEntry = EntryRow;

interface RawBlock extends Record<string, SqlStorageValue> {
  first_seq: number;
  last_seq: number;
  start_pos: number;
  bodies: ArrayBuffer;
  ends: string;
  times: string;
  producer_id: string | null;
  stamps: string | null;
}

export function storedEntries(sql: SqlStorage): StoredEntry[] {
  const rows: StoredEntry[] = [];
  for (const block of sql.exec<RawBlock>("SELECT * FROM log_blocks ORDER BY first_seq").toArray()) {
    const ends = JSON.parse(block.ends) as number[];
    const times = JSON.parse(block.times) as number | number[];
    const stamps = block.stamps === null ? null : (JSON.parse(block.stamps) as ([number, number] | null)[]);
    if (ends.length !== block.last_seq - block.first_seq + 1) throw new Error(`block ${block.first_seq} miscounts`);
    ends.forEach((end, index) => {
      const stamp = stamps?.[index] ?? null;
      rows.push({
        seq: block.first_seq + index,
        end_pos: block.start_pos + end,
        body: block.bodies.slice(index === 0 ? 0 : (ends[index - 1] as number), end),
        time: typeof times === "number" ? times : (times[index] as number),
        producer_id: stamp === null ? null : block.producer_id,
        producer_epoch: stamp?.[0] ?? null,
        producer_seq: stamp?.[1] ?? null,
      });
    });
  }
  return rows;
}

/**
 * Turns a log stored in blocks back into the layout before them, as the code before blocks wrote
 * it: `log_entries`, one row per entry with its stamp, and no `log_blocks`. The block migration
 * (run schema 9, stream schema 3) is unrecorded, so the next wake applies it.
 */
export function revertBlocksMigration(sql: SqlStorage, version: number): void {
  const entries = storedEntries(sql);
  sql.exec(LOG_ENTRIES_TABLE);
  for (const row of entries) {
    sql.exec(
      "INSERT INTO log_entries (seq, end_pos, body, time, producer_id, producer_epoch, producer_seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
      row.seq,
      row.end_pos,
      row.body,
      row.time,
      row.producer_id,
      row.producer_epoch,
      row.producer_seq,
    );
  }
  sql.exec("DROP TABLE log_blocks");
  // Later migrations go too, so the wake applies this one again; run migration 10 is safe to re-run.
  sql.exec("DELETE FROM schema_migrations WHERE version >= ?", version);
}

/** Every row of every table but the log's storage and the migration records, bytes as hex. */
export function dumpTables(sql: SqlStorage): Record<string, unknown[]> {
  const tables = sql
    .exec<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'
       AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
       AND name NOT IN ('log_entries', 'log_blocks', 'schema_migrations') ORDER BY name`,
    )
    .toArray();
  const dump: Record<string, unknown[]> = {};
  for (const { name } of tables) {
    dump[name] = sql
      .exec(`SELECT * FROM "${name}" ORDER BY rowid`)
      .toArray()
      .map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, hexOf(value)])));
  }
  return dump;
}

/** Entries as comparable values: every column, the body as hex. */
export function entryRows(rows: readonly StoredEntry[]): unknown[] {
  return rows.map((row) => ({ ...row, body: hexOf(row.body) }));
}

function hexOf(value: SqlStorageValue): SqlStorageValue {
  if (!(value instanceof ArrayBuffer)) return value;
  return `hex:${[...new Uint8Array(value)].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}
