import type { Migration } from "./migrations.ts";

/**
 * SQLite schema of TenantPools (one per tenant), version 1: the tenant's pool keys (the secret's
 * SHA-256 only; a revoked key keeps its row with `revoked_at`) and the names of its queues, so
 * the tenant's dispatchers can be listed.
 */
const TENANT_POOLS_SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS pool_keys (
  id TEXT PRIMARY KEY,
  secret_hash TEXT NOT NULL,
  label TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE TABLE IF NOT EXISTS queues (
  name TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL
);
`;

/** TenantPools' migrations, applied on every wake (migrations.ts). Append; never edit a shipped one. */
export const TENANT_POOLS_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "pool keys and queue names", sql: TENANT_POOLS_SCHEMA_V1 },
];
