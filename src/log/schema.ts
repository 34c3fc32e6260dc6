/**
 * The layout before blocks: one row per entry with its producer stamp. Still created by
 * LOG_SCHEMA (migration 1), and converted to blocks by a later migration (convert.ts).
 */
export const LOG_ENTRIES_TABLE = `CREATE TABLE IF NOT EXISTS log_entries (
  seq INTEGER PRIMARY KEY,
  end_pos INTEGER NOT NULL,
  body BLOB NOT NULL,
  time INTEGER NOT NULL,
  producer_id TEXT,
  producer_epoch INTEGER,
  producer_seq INTEGER
);`;

/**
 * SQLite tables of the shared log core. Every statement is idempotent so an object can run it
 * on each start. An object using the core runs this next to its own schema.
 */
export const LOG_SCHEMA = `
CREATE TABLE IF NOT EXISTS log_state (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  tail_seq INTEGER NOT NULL,
  tail_pos INTEGER NOT NULL,
  closed INTEGER NOT NULL DEFAULT 0,
  closed_by_producer TEXT,
  closed_by_epoch INTEGER,
  closed_by_seq INTEGER
);
${LOG_ENTRIES_TABLE}
CREATE INDEX IF NOT EXISTS log_entries_by_producer ON log_entries (producer_id, producer_seq) WHERE producer_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS log_producers (
  producer_id TEXT PRIMARY KEY,
  epoch INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
`;

/**
 * Log core migration: the (producer_id, producer_seq) index cost a write per stored entry and
 * served only the rare lookup of a resent runner event, which now bisects by seq instead
 * (LogCore.entryForProducerSeq). Appended to RunObject's and StreamObject's migration lists.
 */
export const DROP_PRODUCER_INDEX = "DROP INDEX IF EXISTS log_entries_by_producer;";

/**
 * Log core migration: entries stored in blocks (src/log/blocks.ts), one row per append instead of
 * one per entry. The table is created here; convertEntriesToBlocks moves the entries of
 * `log_entries` into it and drops the old table, in the migration's transaction.
 */
export const BLOCKS_SCHEMA = `
CREATE TABLE IF NOT EXISTS log_blocks (
  first_seq INTEGER PRIMARY KEY,
  last_seq INTEGER NOT NULL,
  start_pos INTEGER NOT NULL,
  end_pos INTEGER NOT NULL,
  bodies BLOB NOT NULL,
  ends TEXT NOT NULL,
  times TEXT NOT NULL,
  producer_id TEXT,
  stamps TEXT
);
`;
