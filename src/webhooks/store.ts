import type {
  DeliveryAttempt,
  DeliveryState,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventType,
} from "../protocol/index.ts";

// Typed access to the webhook object's tables (src/objects/webhook-schema.ts). Callers hold
// the transaction.

interface RawEndpoint extends Record<string, SqlStorageValue> {
  id: string;
  url: string;
  events: string;
  secret: string;
  created_at: number;
  disabled_at: number | null;
}

interface RawDelivery extends Record<string, SqlStorageValue> {
  endpoint_id: string;
  webhook_id: string;
  run_id: string | null;
  type: string;
  state: string;
  attempts: number;
  next_attempt_at: number | null;
  give_up_at: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
}

interface RawAttempt extends Record<string, SqlStorageValue> {
  attempt: number;
  at: number;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

/** A delivery the alarm tries now: where, with what secret, which body. */
export interface DueDelivery {
  endpointId: string;
  webhookId: string;
  url: string;
  secret: string;
  body: string;
  attempts: number;
  giveUpAt: number;
}

export interface EndpointWithSecret extends WebhookEndpoint {
  secret: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

function endpointOf(row: RawEndpoint): EndpointWithSecret {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as WebhookEventType[],
    createdAt: iso(row.created_at),
    disabledAt: row.disabled_at === null ? null : iso(row.disabled_at),
    secret: row.secret,
  };
}

export class WebhookStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  // ---- endpoints -------------------------------------------------------------------------------

  addEndpoint(endpoint: EndpointWithSecret, now: number): void {
    this.sql.exec(
      "INSERT INTO endpoints (id, url, events, secret, created_at) VALUES (?, ?, ?, ?, ?)",
      endpoint.id,
      endpoint.url,
      JSON.stringify(endpoint.events),
      endpoint.secret,
      now,
    );
  }

  endpointCount(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM endpoints").one().n;
  }

  endpoints(): EndpointWithSecret[] {
    return this.sql.exec<RawEndpoint>("SELECT * FROM endpoints ORDER BY created_at, id").toArray().map(endpointOf);
  }

  endpoint(id: string): EndpointWithSecret | null {
    const row = this.sql.exec<RawEndpoint>("SELECT * FROM endpoints WHERE id = ?", id).toArray()[0];
    return row ? endpointOf(row) : null;
  }

  /** Removes the endpoint with its deliveries and their attempts, and the messages nobody else has. */
  deleteEndpoint(id: string): void {
    this.sql.exec("DELETE FROM attempts WHERE endpoint_id = ?", id);
    this.sql.exec("DELETE FROM deliveries WHERE endpoint_id = ?", id);
    this.sql.exec("DELETE FROM endpoints WHERE id = ?", id);
    this.dropOrphanMessages();
  }

  /** The receiver answered 410: nothing more goes to it, and what was pending is failed. */
  disable(id: string, error: string, now: number): void {
    this.sql.exec("UPDATE endpoints SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL", now, id);
    this.sql.exec(
      `UPDATE deliveries SET state = 'failed', next_attempt_at = NULL, last_error = ?, updated_at = ?
       WHERE endpoint_id = ? AND state = 'pending'`,
      error,
      now,
      id,
    );
  }

  // ---- messages and deliveries -----------------------------------------------------------------

  hasMessage(webhookId: string): boolean {
    return this.sql.exec("SELECT 1 FROM messages WHERE webhook_id = ?", webhookId).toArray().length > 0;
  }

  addMessage(webhookId: string, type: string, runId: string | null, body: string, now: number): void {
    this.sql.exec(
      "INSERT INTO messages (webhook_id, type, run_id, body, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
      webhookId,
      type,
      runId,
      body,
      now,
    );
  }

  /** A delivery of the message to the endpoint, due now; a repeat of one that exists is a no-op. */
  addDelivery(
    endpointId: string,
    webhookId: string,
    runId: string | null,
    type: string,
    now: number,
    giveUpAt: number,
  ): void {
    this.sql.exec(
      `INSERT INTO deliveries (endpoint_id, webhook_id, run_id, type, state, next_attempt_at, give_up_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      endpointId,
      webhookId,
      runId,
      type,
      now,
      giveUpAt,
      now,
      now,
    );
  }

  /** Pending deliveries due by `now` to endpoints still enabled, soonest first. */
  due(now: number, limit: number): DueDelivery[] {
    return this.sql
      .exec<{
        endpoint_id: string;
        webhook_id: string;
        url: string;
        secret: string;
        body: string;
        attempts: number;
        give_up_at: number;
      }>(
        `SELECT d.endpoint_id, d.webhook_id, e.url, e.secret, m.body, d.attempts, d.give_up_at
         FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id JOIN messages m ON m.webhook_id = d.webhook_id
         WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND e.disabled_at IS NULL
         ORDER BY d.next_attempt_at LIMIT ?`,
        now,
        limit,
      )
      .toArray()
      .map((row) => ({
        endpointId: row.endpoint_id,
        webhookId: row.webhook_id,
        url: row.url,
        secret: row.secret,
        body: row.body,
        attempts: row.attempts,
        giveUpAt: row.give_up_at,
      }));
  }

  /** Moves the next try to `at`: before sending (so a crash mid-send retries then) and after a failure. */
  scheduleAt(endpointId: string, webhookId: string, at: number, now: number): void {
    this.sql.exec(
      "UPDATE deliveries SET next_attempt_at = ?, updated_at = ? WHERE endpoint_id = ? AND webhook_id = ? AND state = 'pending'",
      at,
      now,
      endpointId,
      webhookId,
    );
  }

  /** Records one attempt; answers the delivery's attempt count, or null when it is gone (its endpoint deleted). */
  recordAttempt(
    endpointId: string,
    webhookId: string,
    attempt: { at: number; status: number | null; error: string | null; durationMs: number },
  ): number | null {
    const row = this.sql
      .exec<{ attempts: number }>(
        `UPDATE deliveries SET attempts = attempts + 1, last_status = ?, last_error = ?, updated_at = ?
         WHERE endpoint_id = ? AND webhook_id = ? RETURNING attempts`,
        attempt.status,
        attempt.error,
        attempt.at,
        endpointId,
        webhookId,
      )
      .toArray()[0];
    if (!row) return null;
    this.sql.exec(
      "INSERT INTO attempts (endpoint_id, webhook_id, attempt, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
      endpointId,
      webhookId,
      row.attempts,
      attempt.at,
      attempt.status,
      attempt.error,
      attempt.durationMs,
    );
    return row.attempts;
  }

  finish(endpointId: string, webhookId: string, state: Exclude<DeliveryState, "pending">, now: number): void {
    this.sql.exec(
      "UPDATE deliveries SET state = ?, next_attempt_at = NULL, updated_at = ? WHERE endpoint_id = ? AND webhook_id = ?",
      state,
      now,
      endpointId,
      webhookId,
    );
  }

  /** Makes a delivery pending again, due now, with a fresh retry window; false when there is none. */
  redeliver(endpointId: string, webhookId: string, now: number, giveUpAt: number): boolean {
    return (
      this.sql
        .exec(
          `UPDATE deliveries SET state = 'pending', next_attempt_at = ?, give_up_at = ?, updated_at = ?
           WHERE endpoint_id = ? AND webhook_id = ? RETURNING 1`,
          now,
          giveUpAt,
          now,
          endpointId,
          webhookId,
        )
        .toArray().length > 0
    );
  }

  /** The soonest pending try, for the alarm. */
  nextDue(): number | null {
    return this.sql
      .exec<{ at: number | null }>(
        `SELECT MIN(d.next_attempt_at) AS at FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
         WHERE d.state = 'pending' AND e.disabled_at IS NULL`,
      )
      .one().at;
  }

  /** Drops deliveries finished before `before`, with their attempts and orphaned messages. */
  prune(before: number): void {
    const gone = this.sql
      .exec<{ endpoint_id: string; webhook_id: string }>(
        "DELETE FROM deliveries WHERE state <> 'pending' AND updated_at < ? RETURNING endpoint_id, webhook_id",
        before,
      )
      .toArray();
    if (gone.length === 0) return;
    for (const row of gone) {
      this.sql.exec("DELETE FROM attempts WHERE endpoint_id = ? AND webhook_id = ?", row.endpoint_id, row.webhook_id);
    }
    this.dropOrphanMessages();
  }

  // ---- the log -----------------------------------------------------------------------------------

  delivery(endpointId: string, webhookId: string): WebhookDelivery | null {
    const row = this.sql
      .exec<RawDelivery>("SELECT * FROM deliveries WHERE endpoint_id = ? AND webhook_id = ?", endpointId, webhookId)
      .toArray()[0];
    return row ? this.deliveryOf(row) : null;
  }

  /** One endpoint's deliveries, newest first. */
  deliveriesOf(endpointId: string, limit: number): WebhookDelivery[] {
    return this.sql
      .exec<RawDelivery>(
        "SELECT * FROM deliveries WHERE endpoint_id = ? ORDER BY created_at DESC, webhook_id LIMIT ?",
        endpointId,
        limit,
      )
      .toArray()
      .map((row) => this.deliveryOf(row));
  }

  /** One run's deliveries to every endpoint, oldest first: its notifications. */
  deliveriesOfRun(runId: string, limit: number): WebhookDelivery[] {
    return this.sql
      .exec<RawDelivery>(
        "SELECT * FROM deliveries WHERE run_id = ? ORDER BY created_at, webhook_id, endpoint_id LIMIT ?",
        runId,
        limit,
      )
      .toArray()
      .map((row) => this.deliveryOf(row));
  }

  private deliveryOf(row: RawDelivery): WebhookDelivery {
    const log = this.sql
      .exec<RawAttempt>(
        "SELECT attempt, at, status, error, duration_ms FROM attempts WHERE endpoint_id = ? AND webhook_id = ? ORDER BY attempt",
        row.endpoint_id,
        row.webhook_id,
      )
      .toArray()
      .map(
        (a): DeliveryAttempt => ({
          attempt: a.attempt,
          at: iso(a.at),
          status: a.status,
          error: a.error,
          durationMs: a.duration_ms,
        }),
      );
    return {
      id: row.webhook_id,
      webhookId: row.endpoint_id,
      type: row.type as WebhookDelivery["type"],
      runId: row.run_id,
      state: row.state as DeliveryState,
      createdAt: iso(row.created_at),
      attempts: row.attempts,
      nextAttemptAt: row.next_attempt_at === null ? null : iso(row.next_attempt_at),
      giveUpAt: iso(row.give_up_at),
      lastStatus: row.last_status,
      lastError: row.last_error,
      log,
    };
  }

  private dropOrphanMessages(): void {
    this.sql.exec("DELETE FROM messages WHERE webhook_id NOT IN (SELECT webhook_id FROM deliveries)");
  }
}
