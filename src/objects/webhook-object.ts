import { randomBytes } from "node:crypto";
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import { alarmTimeFor } from "./alarm-schedule.ts";
import {
  type CreatedWebhook,
  type CreateWebhookBody,
  fail,
  MAX_WEBHOOKS,
  ok,
  type Result,
  WEBHOOK_PING,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookPayload,
} from "../protocol/index.ts";
import type { WebhookNotice } from "../run/webhook-notices.ts";
import { attemptDelivery } from "../webhooks/attempt.ts";
import { DELIVERY_RETENTION_MS, retryDelay, type WebhookSettings, webhookSettings } from "../webhooks/settings.ts";
import { newWebhookSecret } from "../webhooks/signing.ts";
import { type DueDelivery, type EndpointWithSecret, WebhookStore } from "../webhooks/store.ts";
import { checkWebhookUrl } from "../webhooks/url-policy.ts";
import { applyMigrations } from "./migrations.ts";
import { WEBHOOK_MIGRATIONS } from "./webhook-schema.ts";

/** Most deliveries one alarm tries at once. */
const BATCH = 20;

const publicView = ({ secret: _, ...endpoint }: EndpointWithSecret): WebhookEndpoint => endpoint;

/**
 * One per tenant: its webhook endpoints and one delivery per (endpoint, message), tried by the
 * object's alarm until the receiver answers 2xx or the retry window ends (docs/WEBHOOKS.md).
 * Runs reach it through their outbox (src/run/webhook-notices.ts), so what it is told was
 * committed with the change; it only stores here, and sends later, from the alarm.
 */
export class WebhookObject extends DurableObject<Env> {
  private readonly store: WebhookStore;
  private readonly settings: WebhookSettings;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    applyMigrations(ctx.storage, WEBHOOK_MIGRATIONS);
    this.store = new WebhookStore(ctx.storage.sql);
    this.settings = webhookSettings(env);
    // A wake after a crash arms the alarm again from the rows, as the run object does.
    void ctx.blockConcurrencyWhile(() => this.schedule());
  }

  // ---- endpoints ---------------------------------------------------------------------------------

  async create(body: CreateWebhookBody): Promise<Result<CreatedWebhook>> {
    const url = checkWebhookUrl(body.url, this.settings.allowHttp);
    if (!url.ok) return url;
    if (this.store.endpointCount() >= MAX_WEBHOOKS) {
      return fail("too_many_webhooks", `the tenant has ${MAX_WEBHOOKS} webhooks, as many as it may have`);
    }
    const now = Date.now();
    const endpoint: EndpointWithSecret = {
      id: `wh_${randomBytes(10).toString("hex")}`,
      url: url.value,
      events: body.events,
      createdAt: new Date(now).toISOString(),
      disabledAt: null,
      secret: newWebhookSecret(),
    };
    this.store.addEndpoint(endpoint, now);
    return ok(endpoint);
  }

  async list(): Promise<WebhookEndpoint[]> {
    return this.store.endpoints().map(publicView);
  }

  async remove(id: string): Promise<Result<{ id: string; deleted: true }>> {
    if (!this.store.endpoint(id)) return fail("not_found", `no webhook ${id}`);
    this.ctx.storage.transactionSync(() => this.store.deleteEndpoint(id));
    await this.schedule();
    return ok({ id, deleted: true });
  }

  // ---- what runs tell it ---------------------------------------------------------------------------

  /**
   * A run's event from its outbox: a delivery for each enabled endpoint that takes its type. A
   * repeat (the run's outbox sent it again after a crash) finds its message and adds nothing.
   */
  async notice(notice: WebhookNotice): Promise<Result<{ deliveries: number }>> {
    const now = Date.now();
    const takers = this.store.endpoints().filter((e) => e.disabledAt === null && e.events.includes(notice.type));
    if (takers.length === 0 || this.store.hasMessage(notice.webhookId)) return ok({ deliveries: 0 });
    const payload: WebhookPayload = {
      type: notice.type,
      timestamp: new Date(notice.occurredAt).toISOString(),
      data: { run: notice.run },
    };
    this.ctx.storage.transactionSync(() => {
      this.store.addMessage(notice.webhookId, notice.type, notice.runId, JSON.stringify(payload), now);
      for (const endpoint of takers) {
        this.store.addDelivery(
          endpoint.id,
          notice.webhookId,
          notice.runId,
          notice.type,
          now,
          now + this.settings.retryForMs,
        );
      }
    });
    await this.schedule();
    return ok({ deliveries: takers.length });
  }

  // ---- the log, redelivery and the ping -----------------------------------------------------------

  async deliveries(endpointId: string, limit: number): Promise<Result<WebhookDelivery[]>> {
    if (!this.store.endpoint(endpointId)) return fail("not_found", `no webhook ${endpointId}`);
    return ok(this.store.deliveriesOf(endpointId, limit));
  }

  async runDeliveries(runId: string, limit: number): Promise<WebhookDelivery[]> {
    return this.store.deliveriesOfRun(runId, limit);
  }

  /** Sends a delivery again under the same webhook-id, with a fresh retry window. */
  async redeliver(endpointId: string, webhookId: string): Promise<Result<WebhookDelivery>> {
    const endpoint = this.usable(endpointId);
    if (!endpoint.ok) return endpoint;
    const now = Date.now();
    const found = this.store.redeliver(endpointId, webhookId, now, now + this.settings.retryForMs);
    if (!found) return fail("not_found", `webhook ${endpointId} has no delivery ${webhookId}`);
    await this.schedule();
    return ok(this.store.delivery(endpointId, webhookId) as WebhookDelivery);
  }

  /** A test message (`webhook.ping`) to one endpoint, delivered and retried like any other. */
  async ping(endpointId: string): Promise<Result<WebhookDelivery>> {
    const endpoint = this.usable(endpointId);
    if (!endpoint.ok) return endpoint;
    const now = Date.now();
    const webhookId = `msg_ping_${randomBytes(12).toString("hex")}`;
    const payload: WebhookPayload = { type: WEBHOOK_PING, timestamp: new Date(now).toISOString(), data: { run: null } };
    this.ctx.storage.transactionSync(() => {
      this.store.addMessage(webhookId, WEBHOOK_PING, null, JSON.stringify(payload), now);
      this.store.addDelivery(endpointId, webhookId, null, WEBHOOK_PING, now, now + this.settings.retryForMs);
    });
    await this.schedule();
    return ok(this.store.delivery(endpointId, webhookId) as WebhookDelivery);
  }

  private usable(endpointId: string): Result<EndpointWithSecret> {
    const endpoint = this.store.endpoint(endpointId);
    if (!endpoint) return fail("not_found", `no webhook ${endpointId}`);
    if (endpoint.disabledAt !== null) {
      return fail(
        "webhook_disabled",
        `webhook ${endpointId} answered 410 Gone at ${endpoint.disabledAt}; add it again`,
      );
    }
    return ok(endpoint);
  }

  // ---- delivery ------------------------------------------------------------------------------------

  /** Tries what is due, in parallel, then arms the alarm for the next try. */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const due = this.store.due(now, BATCH);
    // Should the object die mid-send, each is tried again once its attempt could have ended.
    const retryAt = now + this.settings.attemptTimeoutMs + this.settings.retryBaseMs;
    this.ctx.storage.transactionSync(() => {
      for (const d of due) this.store.scheduleAt(d.endpointId, d.webhookId, retryAt, now);
    });
    await Promise.all(due.map((d) => this.attempt(d)));
    this.ctx.storage.transactionSync(() => this.store.prune(Date.now() - DELIVERY_RETENTION_MS));
    await this.schedule();
  }

  private async attempt(delivery: DueDelivery): Promise<void> {
    const result = await attemptDelivery(delivery, this.settings.attemptTimeoutMs);
    this.ctx.storage.transactionSync(() => {
      const attempts = this.store.recordAttempt(delivery.endpointId, delivery.webhookId, result);
      if (attempts === null) return;
      const { endpointId, webhookId } = delivery;
      if (result.status !== null && result.status >= 200 && result.status < 300) {
        this.store.finish(endpointId, webhookId, "succeeded", result.at);
      } else if (result.status === 410) {
        this.store.disable(endpointId, "the endpoint answered 410 Gone and is disabled", result.at);
      } else {
        const next = Date.now() + retryDelay(this.settings, attempts);
        if (next > delivery.giveUpAt) this.store.finish(endpointId, webhookId, "failed", result.at);
        else this.store.scheduleAt(endpointId, webhookId, next, result.at);
      }
    });
  }

  private async schedule(): Promise<void> {
    const next = this.store.nextDue();
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(alarmTimeFor(Math.max(next, Date.now())));
  }
}
