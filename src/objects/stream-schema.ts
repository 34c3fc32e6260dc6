import { convertEntriesToBlocks } from "../log/convert.ts";
import { BLOCKS_SCHEMA, DROP_PRODUCER_INDEX, LOG_SCHEMA } from "../log/schema.ts";
import type { Migration } from "./migrations.ts";

/**
 * SQLite schema of StreamObject, version 1: one row of stream configuration next to the shared
 * log core's tables (src/log/schema.ts), plus the bookkeeping of forks. Later changes are
 * migrations in STREAM_MIGRATIONS, never edits here.
 */
const STREAM_SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS stream_meta (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  stream_id TEXT NOT NULL,
  tenant TEXT NOT NULL,
  path TEXT NOT NULL,
  content_type TEXT NOT NULL,
  ttl_seconds INTEGER,
  expires_at TEXT,
  expires_at_ms INTEGER,
  created_at INTEGER NOT NULL,
  touched_at INTEGER NOT NULL,
  writer_seq TEXT
);
-- Appends stored as more than one entry (JSON batches, bodies over 1 MiB): a fork sub-offset
-- counts within one append, so its extent must be known. Single-entry appends have no row.
CREATE TABLE IF NOT EXISTS stream_appends (
  first_seq INTEGER PRIMARY KEY,
  last_seq INTEGER NOT NULL
);
-- This stream is a fork: its source, the reference it holds there and how it was created.
-- copying = 1 while the source's prefix is being copied (the stream does not exist yet).
CREATE TABLE IF NOT EXISTS stream_lineage (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  tenant TEXT NOT NULL,
  source_path TEXT NOT NULL,
  fork_ref TEXT NOT NULL,
  fork_offset TEXT,
  sub_offset INTEGER NOT NULL,
  expiry_inherited INTEGER NOT NULL,
  copying INTEGER NOT NULL,
  started_at INTEGER NOT NULL
);
-- References held on this stream by its live forks; while any remain, deleting or expiring the
-- stream only soft-deletes it.
CREATE TABLE IF NOT EXISTS stream_fork_refs (
  fork_ref TEXT PRIMARY KEY,
  fork_path TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
-- Soft-deleted: gone to clients, kept until the last fork releases it.
CREATE TABLE IF NOT EXISTS stream_tombstone (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  deleted_at INTEGER NOT NULL
);
-- References this object still has to release on a source (an outbox: survives the stream).
CREATE TABLE IF NOT EXISTS stream_releases (
  fork_ref TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  source_path TEXT NOT NULL,
  queued_at INTEGER NOT NULL
);
`;

/** StreamObject's migrations, applied on every wake (migrations.ts). Append; never edit a shipped one. */
export const STREAM_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "stream tables and the log core", sql: `${LOG_SCHEMA}${STREAM_SCHEMA_V1}` },
  { version: 2, name: "log entries without the producer index", sql: DROP_PRODUCER_INDEX },
  { version: 3, name: "log entries stored in blocks", sql: BLOCKS_SCHEMA, run: convertEntriesToBlocks },
];
