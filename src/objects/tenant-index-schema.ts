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

/** TenantIndex's migrations, applied on every wake (migrations.ts). Append; never edit a shipped one. */
export const TENANT_INDEX_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "runs by creation time", sql: TENANT_INDEX_SCHEMA_V1 },
  { version: 2, name: "versioned rows and removal tombstones", sql: TENANT_INDEX_SCHEMA_V2 },
];
