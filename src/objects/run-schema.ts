import { DROP_PRODUCER_INDEX, LOG_SCHEMA } from "../log/schema.ts";
import type { Migration } from "./migrations.ts";

/**
 * SQLite schema of RunObject, version 1. The event log, the claim epoch and the highest
 * sourceSeq live in the shared log core's tables (the runner is the log's one producer); these
 * tables hold the rest of the run. Later changes are migrations in RUN_MIGRATIONS, never edits here.
 */
const RUN_SCHEMA_V1 = `${LOG_SCHEMA}
CREATE TABLE IF NOT EXISTS run (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  tenant TEXT NOT NULL,
  run_id TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  claimed_at INTEGER,
  finished_at INTEGER,
  purged_at INTEGER,
  controller_seq INTEGER NOT NULL DEFAULT 0,
  runner_id TEXT,
  outcome TEXT,
  agent TEXT,
  input TEXT,
  metadata TEXT NOT NULL,
  timeouts TEXT NOT NULL,
  retention_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS commands (
  command_id TEXT PRIMARY KEY,
  controller_seq INTEGER NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  body TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL,
  delivered_epoch INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS approvals (
  request_id TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  requested_seq INTEGER NOT NULL,
  data TEXT NOT NULL,
  decision TEXT,
  reason TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  resolved_at INTEGER
);
CREATE TABLE IF NOT EXISTS timers (
  kind TEXT NOT NULL,
  ref TEXT NOT NULL DEFAULT '',
  due_at INTEGER NOT NULL,
  PRIMARY KEY (kind, ref)
);
`;

/** RunObject's migrations, applied on every wake (migrations.ts). Append; never edit a shipped one. */
export const RUN_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "run tables and the log core", sql: RUN_SCHEMA_V1 },
  { version: 2, name: "log entries without the producer index", sql: DROP_PRODUCER_INDEX },
];
