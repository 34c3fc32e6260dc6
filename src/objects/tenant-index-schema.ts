import type { Migration } from "./migrations.ts";

/** SQLite schema of TenantIndex, version 1: one row per run of the tenant, for listing. */
const TENANT_INDEX_SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at DESC, run_id DESC);
`;

/**
 * Version 2: each row keeps the run status version it was written at, and a purged run stays as a
 * `removed` row, so an older sync landing late can neither roll a status back nor list a purged run.
 */
const TENANT_INDEX_SCHEMA_V2 = `
ALTER TABLE runs ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN removed INTEGER NOT NULL DEFAULT 0;
`;

/**
 * Version 3, finding runs and summing usage: each row's agent name and usage totals; its tags and
 * indexable metadata entries in tables keyed for the list's filters, newest first within a tag or
 * a key = value (so a filter walks its own index, never a scan of every run); each run's usage per
 * UTC day for GET /v1/usage. Costs are whole nano-dollars.
 */
const TENANT_INDEX_SCHEMA_V3 = `
ALTER TABLE runs ADD COLUMN agent TEXT;
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cached_input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cost_nano_usd INTEGER;
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS runs_by_agent ON runs (agent, created_at DESC, run_id DESC);
CREATE TABLE IF NOT EXISTS run_tags (
  tag TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  run_id TEXT NOT NULL,
  PRIMARY KEY (tag, created_at, run_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_tags_by_run ON run_tags (run_id, tag);
CREATE TABLE IF NOT EXISTS run_meta (
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  run_id TEXT NOT NULL,
  PRIMARY KEY (key, value, created_at, run_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_meta_by_run ON run_meta (run_id, key, value);
CREATE TABLE IF NOT EXISTS run_usage (
  run_id TEXT NOT NULL,
  day TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  cached_input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  cost_nano_usd INTEGER NOT NULL,
  PRIMARY KEY (day, run_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_usage_by_run ON run_usage (run_id);
`;

/** Version 4: each row's pool queue (null for a run started by hand), so the list shows it. */
const TENANT_INDEX_SCHEMA_V4 = "ALTER TABLE runs ADD COLUMN queue TEXT;";

/**
 * Version 5: whether a row's tags and metadata are in run_tags and run_meta. Rows written before
 * version 3 are not: their next sync adds them (a run's tags and metadata never change after).
 */
const TENANT_INDEX_SCHEMA_V5 = "ALTER TABLE runs ADD COLUMN findable INTEGER NOT NULL DEFAULT 0;";

/** TenantIndex's migrations, applied on every wake (migrations.ts). Append; never edit a shipped one. */
export const TENANT_INDEX_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "runs by creation time", sql: TENANT_INDEX_SCHEMA_V1 },
  { version: 2, name: "versioned rows and removal tombstones", sql: TENANT_INDEX_SCHEMA_V2 },
  { version: 3, name: "agents, tags, metadata and usage", sql: TENANT_INDEX_SCHEMA_V3 },
  { version: 4, name: "pool queues", sql: TENANT_INDEX_SCHEMA_V4 },
  { version: 5, name: "rows whose tags and metadata are indexed", sql: TENANT_INDEX_SCHEMA_V5 },
];
