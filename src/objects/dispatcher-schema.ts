import type { Migration } from "./migrations.ts";

/**
 * SQLite schema of Dispatcher (one per tenant and queue), version 1. `settings`: the queue's
 * name, tenant and limits. `runs`: every pool run of the queue the dispatcher was told about,
 * by state — queued (waiting, oldest `queued_at` first), assigned (a lease: `lease_due`), running
 * (claimed), parked (recovering, waiting for an operator) and finished (kept a day, so a late
 * repeat of a notification cannot bring it back). `last_notice` is the run's outbox seq last
 * applied; `notices` the (run, generation, status) keys seen. Hosts are not stored: they are the
 * object's hibernatable WebSockets, each carrying its `hello` as its attachment.
 */
const DISPATCHER_SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS settings (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  tenant TEXT NOT NULL,
  queue TEXT NOT NULL,
  max_concurrent INTEGER,
  assign_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  profile TEXT NOT NULL,
  prompt TEXT,
  start TEXT NOT NULL,
  generation INTEGER NOT NULL,
  token_ttl_ms INTEGER NOT NULL,
  queued_at INTEGER NOT NULL,
  last_notice INTEGER NOT NULL,
  host_id TEXT,
  last_host TEXT,
  assignment_id TEXT,
  lease_due INTEGER,
  avoid_host TEXT,
  avoid_until INTEGER,
  reason TEXT,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_state ON runs (state, queued_at, run_id);
CREATE INDEX IF NOT EXISTS runs_by_assignment ON runs (assignment_id);
CREATE TABLE IF NOT EXISTS notices (
  run_id TEXT NOT NULL,
  notice_key TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, notice_key)
);
`;

/**
 * Version 2: `token_id`, the id of the runner token minted for the run's current assignment, so
 * a lapsed lease can revoke it before the run is assigned again (a late host is then refused).
 */
const DISPATCHER_ASSIGNMENT_TOKEN = "ALTER TABLE runs ADD COLUMN token_id TEXT;";

/** Dispatcher's migrations, applied on every wake (migrations.ts). Append; never edit a shipped one. */
export const DISPATCHER_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "queue settings, runs and notices", sql: DISPATCHER_SCHEMA_V1 },
  { version: 2, name: "the runner token of each assignment", sql: DISPATCHER_ASSIGNMENT_TOKEN },
];
