import { z } from "zod";
import { RunRecord } from "./records.ts";
import { RunId } from "./run.ts";

// Webhooks: per-tenant endpoints told of runs' status changes, delivered as the Standard
// Webhooks specification signs them (docs/WEBHOOKS.md).

const Timestamp = z.iso.datetime().describe("ISO-8601, UTC");

export const WEBHOOK_EVENT_TYPES = [
  "run.waiting",
  "run.recovering",
  "run.succeeded",
  "run.failed",
  "run.cancelled",
  "run.timed_out",
  "run.budget_exceeded",
] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES).meta({ id: "WebhookEventType" });
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/** The test ping's type: sent by `POST /v1/webhooks/{webhookId}/ping` only, whatever the endpoint subscribed to. */
export const WEBHOOK_PING = "webhook.ping";

/** Most endpoints a tenant may register. */
export const MAX_WEBHOOKS = 20;
export const MAX_WEBHOOK_URL_CHARS = 2048;
/** Most deliveries one listing answers. */
export const MAX_DELIVERIES_PAGE = 100;

export const WebhookId = z.string().regex(/^wh_[a-z0-9]{1,40}$/, "a webhook id is wh_ and lowercase letters or digits");
/** A delivery's id is its message's `webhook-id` header. */
export const DeliveryId = z.string().regex(/^msg_[A-Za-z0-9_-]{1,64}$/, "a delivery id is the message's webhook-id");

export const CreateWebhookBody = z
  .object({
    url: z.string().min(1).max(MAX_WEBHOOK_URL_CHARS).describe("https: (http: only to loopback, in development)"),
    events: z
      .array(WebhookEventType)
      .min(1)
      .max(WEBHOOK_EVENT_TYPES.length)
      .refine((events) => new Set(events).size === events.length, "each event type once")
      .describe("The event types delivered to it"),
  })
  .strict()
  .meta({ id: "CreateWebhookBody" });
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;

export const WebhookEndpoint = z
  .object({
    id: WebhookId,
    url: z.string(),
    events: z.array(WebhookEventType),
    createdAt: Timestamp,
    disabledAt: z
      .union([Timestamp, z.null()])
      .describe("Set when the receiver answered 410 Gone: nothing more is sent"),
  })
  .meta({ id: "WebhookEndpoint", description: "A registered endpoint: never its secret" });
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const CreatedWebhook = z
  .object({
    ...WebhookEndpoint.shape,
    secret: z.string().describe("Shown once: `whsec_` and the base64 of the HMAC-SHA256 key"),
  })
  .meta({ id: "CreatedWebhook" });
export type CreatedWebhook = z.infer<typeof CreatedWebhook>;

export const WebhookList = z.object({ webhooks: z.array(WebhookEndpoint) }).meta({ id: "WebhookList" });

export const DeletedWebhook = z.object({ id: WebhookId, deleted: z.literal(true) }).meta({ id: "DeletedWebhook" });

export const DeliveryState = z.enum(["pending", "succeeded", "failed"]);
export type DeliveryState = z.infer<typeof DeliveryState>;

export const DeliveryAttempt = z
  .object({
    attempt: z.number().int().min(1),
    at: Timestamp,
    status: z.union([z.number().int(), z.null()]).describe("The receiver's HTTP status; null when none came"),
    error: z.union([z.string(), z.null()]),
    durationMs: z.number().int().min(0),
  })
  .meta({ id: "DeliveryAttempt" });
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;

export const WebhookDelivery = z
  .object({
    id: DeliveryId,
    webhookId: WebhookId,
    type: z.union([WebhookEventType, z.literal(WEBHOOK_PING)]),
    runId: z.union([RunId, z.null()]),
    state: DeliveryState,
    createdAt: Timestamp,
    attempts: z.number().int().min(0),
    nextAttemptAt: z.union([Timestamp, z.null()]).describe("When it is tried next; null once done or failed"),
    giveUpAt: Timestamp.describe("Retries stop here, and the delivery is failed"),
    lastStatus: z.union([z.number().int(), z.null()]),
    lastError: z.union([z.string(), z.null()]),
    log: z.array(DeliveryAttempt).describe("Every attempt, oldest first"),
  })
  .meta({ id: "WebhookDelivery", description: "One message to one endpoint and its attempts" });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const DeliveryList = z.object({ deliveries: z.array(WebhookDelivery) }).meta({ id: "DeliveryList" });

export const WebhookParams = z.object({ webhookId: WebhookId });
export const DeliveryParams = z.object({ webhookId: WebhookId, deliveryId: DeliveryId });
export const DeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_DELIVERIES_PAGE).optional(),
});

/** What a receiver gets: the JSON body of every delivery but the ping. */
export const WebhookPayload = z
  .object({
    type: z.union([WebhookEventType, z.literal(WEBHOOK_PING)]),
    timestamp: Timestamp.describe("When the change happened"),
    data: z.object({ run: z.union([RunRecord, z.null()]) }),
  })
  .meta({ id: "WebhookPayload" });
export type WebhookPayload = z.infer<typeof WebhookPayload>;
