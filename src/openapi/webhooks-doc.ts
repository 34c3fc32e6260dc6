import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import { WEBHOOK_EVENT_TYPES, WEBHOOK_PING, WebhookPayload } from "../protocol/index.ts";
import type { AppEnv } from "../routes/app-env.ts";

/** What the receiver is sent with each message: the Standard Webhooks headers. */
const WebhookHeaders = z.object({
  "webhook-id": z
    .string()
    .describe("msg_…: the same for every attempt and redelivery of one (run, event); dedupe by it"),
  "webhook-timestamp": z.string().describe("The attempt's time, seconds since the epoch"),
  "webhook-signature": z
    .string()
    .describe("v1,<base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the base64-decoded secret after whsec_>"),
});

/**
 * The messages the edge POSTs to registered endpoints, as the document's `webhooks` (OpenAPI
 * 3.1): one per event type, each with the payload and its signed headers (docs/WEBHOOKS.md).
 */
export function documentWebhooks(app: OpenAPIHono<AppEnv>): void {
  for (const type of [...WEBHOOK_EVENT_TYPES, WEBHOOK_PING]) {
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: type,
      tags: ["webhooks"],
      summary: type === WEBHOOK_PING ? "The test ping" : `A run's ${type} event`,
      request: {
        headers: WebhookHeaders,
        body: { content: { "application/json": { schema: WebhookPayload } } },
      },
      responses: {
        200: { description: "Any 2xx: delivered; no further attempt" },
        410: { description: "Gone: the endpoint is disabled and sent nothing more" },
      },
    });
  }
}
