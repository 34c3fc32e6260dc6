import type { Migration } from "./migrations.ts";

/**
 * SQLite schema of WebhookObject (one per tenant), version 1. `endpoints`: the tenant's
 * registered URLs, the event types each takes, its signing secret, and `disabled_at` once it
 * answered 410. `messages`: one per `webhook_id` (a run's event, or a ping), its JSON body as
 * every attempt sends it. `deliveries`: one per (endpoint, message), pending until 2xx or failed
 * past `give_up_at`; `next_attempt_at` is the alarm's work list. `attempts`: every try, for the log.
 */
const WEBHOOK_SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS endpoints (
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  disabled_at INTEGER
);
CREATE TABLE IF NOT EXISTS messages (
  webhook_id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  run_id TEXT,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS deliveries (
  endpoint_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  run_id TEXT,
  type TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  give_up_at INTEGER NOT NULL,
  last_status INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, webhook_id)
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS deliveries_by_endpoint ON deliveries (endpoint_id, created_at);
CREATE INDEX IF NOT EXISTS deliveries_by_run ON deliveries (run_id, created_at);
CREATE INDEX IF NOT EXISTS deliveries_finished ON deliveries (updated_at) WHERE state <> 'pending';
CREATE TABLE IF NOT EXISTS attempts (
  endpoint_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at INTEGER NOT NULL,
  status INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, webhook_id, attempt)
);
`;

/** WebhookObject's migrations, applied on every wake (migrations.ts). Append; never edit a shipped one. */
export const WEBHOOK_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "endpoints, messages, deliveries and attempts", sql: WEBHOOK_SCHEMA_V1 },
];
