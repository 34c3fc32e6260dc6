import { convertEntriesToBlocks } from "../log/convert.ts";
import { BLOCKS_SCHEMA, DROP_PRODUCER_INDEX, LOG_SCHEMA } from "../log/schema.ts";
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

/**
 * Version 2, recovery: the run's agent generation, its provider session and recovery state; the
 * generation a command is bound to and an approval was requested in; operators' recovery
 * decisions; and the checkpoint, as chunks of at most 1 MiB (a row holds at most 2 MB) written
 * under an upload id and made current in one transaction, so a refused or interrupted upload
 * never replaces the previous checkpoint.
 */
const RUN_SCHEMA_V2 = `
ALTER TABLE run ADD COLUMN generation INTEGER NOT NULL DEFAULT 1;
ALTER TABLE run ADD COLUMN native_session TEXT;
ALTER TABLE run ADD COLUMN recovery TEXT;
ALTER TABLE run ADD COLUMN recovery_episode INTEGER NOT NULL DEFAULT 0;
ALTER TABLE commands ADD COLUMN generation INTEGER;
ALTER TABLE approvals ADD COLUMN generation INTEGER NOT NULL DEFAULT 1;
CREATE TABLE IF NOT EXISTS recovery_decisions (
  command_id TEXT PRIMARY KEY,
  action TEXT NOT NULL,
  episode INTEGER NOT NULL,
  decided_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoint (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  upload_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  generation INTEGER NOT NULL,
  source_seq INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoint_uploads (
  upload_id TEXT PRIMARY KEY,
  max_bytes INTEGER NOT NULL,
  bytes INTEGER NOT NULL DEFAULT 0,
  chunks INTEGER NOT NULL DEFAULT 0,
  started_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoint_chunks (
  upload_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  body BLOB NOT NULL,
  PRIMARY KEY (upload_id, idx)
);
`;

/**
 * Version 4: migration 2 added `commands.generation` without a value, so commands of runs older
 * than it were left unbound and a later generation took them for its own. Every run had only
 * generation 1 before migration 2, so whatever reached a runner then (a delivered epoch, or a state
 * past queued) was bound to generation 1. Commands still queued and never delivered stay unbound:
 * no runner saw them, so the next generation that claims may safely have them (binding them to 1
 * would make a later generation retire, as unknown, commands that never ran anywhere).
 */
const RUN_SCHEMA_V4 = `
UPDATE commands SET generation = 1
WHERE generation IS NULL AND (state <> 'queued' OR delivered_epoch IS NOT NULL);
`;

/**
 * Version 5: the run's status version, which rises with every status change and purge, so the
 * tenant index can ignore an older sync that lands after a newer one; and the run's tokens, each
 * minted token's id with its role and expiry (src/run/token-store.ts), checked on every use so one
 * can be revoked. Tokens minted before ids existed have none: `legacy_tokens_revoked_at` ends them
 * all at once (revoking all of a run's tokens, or purging it).
 */
const RUN_SCHEMA_V5 = `
ALTER TABLE run ADD COLUMN status_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run ADD COLUMN legacy_tokens_revoked_at INTEGER;
CREATE TABLE IF NOT EXISTS run_tokens (
  token_id TEXT PRIMARY KEY,
  role TEXT NOT NULL,
  interact INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER
);
`;

/**
 * Version 6, runner pools: a pool run's queue (its `agent` is the profile name), its recovery
 * policy and the automatic recoveries used; and the outbox, notifications to other objects (the
 * run's dispatcher) committed with the change they report and delivered until acknowledged
 * (src/run/outbox.ts). `dedupe_key` makes adding the same notification twice a no-op.
 */
const RUN_SCHEMA_V6 = `
ALTER TABLE run ADD COLUMN queue TEXT;
ALTER TABLE run ADD COLUMN recovery_policy TEXT;
ALTER TABLE run ADD COLUMN max_recoveries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run ADD COLUMN auto_recoveries INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  target TEXT NOT NULL,
  dedupe_key TEXT NOT NULL UNIQUE,
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  created_at INTEGER NOT NULL
);
`;

/**
 * Version 7, the claim-rate bound: the run's claim allowance (a token bucket, NULL: full) and
 * when it was last counted, so a `hello` loop cannot grow the log (one `run.claimed` per claim)
 * at any rate it likes.
 */
const RUN_SCHEMA_V7 = `
ALTER TABLE run ADD COLUMN claim_tokens REAL;
ALTER TABLE run ADD COLUMN claim_tokens_at INTEGER NOT NULL DEFAULT 0;
`;

/**
 * Version 8, usage and budgets: the run's tags and budget as created; its usage totals per agent
 * generation and per UTC day (src/run/usage.ts), each updated in the transaction that stores the
 * `agent.usage` event. Costs are whole nano-dollars, so sums stay exact.
 */
const RUN_SCHEMA_V8 = `
ALTER TABLE run ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE run ADD COLUMN budget TEXT;
CREATE TABLE IF NOT EXISTS usage_totals (
  generation INTEGER PRIMARY KEY,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  cached_input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0,
  cost_nano_usd INTEGER,
  model TEXT
);
CREATE TABLE IF NOT EXISTS usage_days (
  day TEXT PRIMARY KEY,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  cached_input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0,
  cost_nano_usd INTEGER NOT NULL DEFAULT 0
);
`;

/**
 * Version 10, the tenant index in shards: the shard count the run's index entry lives under, kept
 * so raising TENANT_INDEX_SHARDS never moves it (tenant-index-shards.ts). NULL until the run's
 * first sync writes today's count; a run from before sharding is listed in shard 0, so it gets 1.
 * Written to be re-run safely (the column only added when missing, only NULLs set).
 */
function addIndexShards(sql: SqlStorage): void {
  const columns = sql.exec<{ name: string }>("PRAGMA table_info(run)").toArray();
  if (!columns.some((column) => column.name === "index_shards"))
    sql.exec("ALTER TABLE run ADD COLUMN index_shards INTEGER");
  sql.exec("UPDATE run SET index_shards = 1 WHERE index_shards IS NULL");
}

/** RunObject's migrations, applied on every wake (migrations.ts). Append; never edit a shipped one. */
export const RUN_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "run tables and the log core", sql: RUN_SCHEMA_V1 },
  { version: 2, name: "generations, recovery and checkpoints", sql: RUN_SCHEMA_V2 },
  { version: 3, name: "log entries without the producer index", sql: DROP_PRODUCER_INDEX },
  { version: 4, name: "commands delivered before generations bound to generation 1", sql: RUN_SCHEMA_V4 },
  { version: 5, name: "status version and revocable tokens", sql: RUN_SCHEMA_V5 },
  { version: 6, name: "pool runs and the outbox", sql: RUN_SCHEMA_V6 },
  { version: 7, name: "claim-rate allowance", sql: RUN_SCHEMA_V7 },
  { version: 8, name: "usage totals, budgets and tags", sql: RUN_SCHEMA_V8 },
  { version: 9, name: "log entries stored in blocks", sql: BLOCKS_SCHEMA, run: convertEntriesToBlocks },
  { version: 10, name: "the run's tenant index shard count", run: addIndexShards },
];
