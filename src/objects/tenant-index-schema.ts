/** SQLite schema of TenantIndex: one row per run of the tenant, for listing. */
export const TENANT_INDEX_SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at DESC, run_id DESC);
`;
