import { runStub, webhookStub } from "../objects/stubs.ts";
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeletedWebhook,
  DeliveriesQuery,
  DeliveryList,
  DeliveryParams,
  MAX_DELIVERIES_PAGE,
  RunParams,
  WebhookDelivery,
  WebhookList,
  WebhookParams,
} from "../protocol/index.ts";
import { API_KEY, RUN_READER } from "./access.ts";
import { apiRoute, apiRouter, jsonRequest, jsonResponse } from "./api-route.ts";
import { respond, unwrap } from "./respond.ts";

/** A tenant's webhook endpoints, their delivery logs, redelivery and the test ping (docs/WEBHOOKS.md). */
export const webhooks = apiRouter();
const tags = ["webhooks"];
const bodyRefusals = ["invalid_json", "invalid_body", "payload_too_large"] as const;

apiRoute(
  webhooks,
  {
    method: "post",
    path: "/webhooks",
    tags,
    summary: "Register a webhook endpoint",
    description:
      "The signing secret (`whsec_…`) is in this answer only. Deliveries follow the Standard Webhooks specification: `webhook-id`, `webhook-timestamp` and `webhook-signature` headers. The URL must be https: (http: to loopback only where the deployment's ALLOW_HTTP_WEBHOOKS=true, in development).",
    access: API_KEY,
    request: { body: jsonRequest(CreateWebhookBody) },
    responses: { 201: jsonResponse(CreatedWebhook, "Registered, with its secret") },
    refusals: [...bodyRefusals, "invalid_webhook_url", "too_many_webhooks"],
  },
  async (c) => respond(c, await webhookStub(c.env, c.var.tenant).create(c.req.valid("json")), 201),
);

apiRoute(
  webhooks,
  {
    method: "get",
    path: "/webhooks",
    tags,
    summary: "List the tenant's webhook endpoints (never their secrets)",
    access: API_KEY,
    responses: { 200: jsonResponse(WebhookList, "The endpoints, oldest first") },
    refusals: [],
  },
  async (c) => c.json({ webhooks: await webhookStub(c.env, c.var.tenant).list() }, 200),
);

apiRoute(
  webhooks,
  {
    method: "delete",
    path: "/webhooks/{webhookId}",
    tags,
    summary: "Remove a webhook endpoint, with its pending deliveries and its log",
    access: API_KEY,
    request: { params: WebhookParams },
    responses: { 200: jsonResponse(DeletedWebhook, "Removed") },
    refusals: ["not_found"],
  },
  async (c) => respond(c, await webhookStub(c.env, c.var.tenant).remove(c.req.valid("param").webhookId), 200),
);

apiRoute(
  webhooks,
  {
    method: "get",
    path: "/webhooks/{webhookId}/deliveries",
    tags,
    summary: "An endpoint's delivery log: each message, its attempts and status codes, and the next try",
    description: `Newest first, at most \`limit\` (default and most ${MAX_DELIVERIES_PAGE}). Finished deliveries are kept 7 days.`,
    access: API_KEY,
    request: { params: WebhookParams, query: DeliveriesQuery },
    responses: { 200: jsonResponse(DeliveryList, "The deliveries") },
    refusals: ["invalid_query", "not_found"],
  },
  async (c) => {
    const { webhookId } = c.req.valid("param");
    const limit = c.req.valid("query").limit ?? MAX_DELIVERIES_PAGE;
    const deliveries = unwrap(await webhookStub(c.env, c.var.tenant).deliveries(webhookId, limit));
    return c.json({ deliveries }, 200);
  },
);

apiRoute(
  webhooks,
  {
    method: "post",
    path: "/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver",
    tags,
    summary: "Send a delivery again, under the same webhook-id",
    description:
      "The delivery is pending again, due now, with a fresh retry window; its attempts so far stay in its log. The receiver dedupes by `webhook-id` as for any retry.",
    access: API_KEY,
    request: { params: DeliveryParams },
    responses: { 202: jsonResponse(WebhookDelivery, "Queued for delivery") },
    refusals: ["not_found", "webhook_disabled"],
  },
  async (c) => {
    const { webhookId, deliveryId } = c.req.valid("param");
    return respond(c, await webhookStub(c.env, c.var.tenant).redeliver(webhookId, deliveryId), 202);
  },
);

apiRoute(
  webhooks,
  {
    method: "post",
    path: "/webhooks/{webhookId}/ping",
    tags,
    summary: "Send a test message (`webhook.ping`) to an endpoint",
    description: "Delivered, signed and retried like any other message; its delivery is in the endpoint's log.",
    access: API_KEY,
    request: { params: WebhookParams },
    responses: { 202: jsonResponse(WebhookDelivery, "Queued for delivery") },
    refusals: ["not_found", "webhook_disabled"],
  },
  async (c) => respond(c, await webhookStub(c.env, c.var.tenant).ping(c.req.valid("param").webhookId), 202),
);

/** One run's notifications: its deliveries to every endpoint of its tenant. */
export const runNotifications = apiRouter();

apiRoute(
  runNotifications,
  {
    method: "get",
    path: "/{runId}/notifications",
    tags,
    summary: "The run's webhook deliveries, to every endpoint, oldest first",
    access: RUN_READER,
    request: { params: RunParams },
    responses: { 200: jsonResponse(DeliveryList, "The run's deliveries") },
    refusals: ["not_found", "gone"],
  },
  async (c) => {
    const { tenant, runId } = c.var.run;
    unwrap(await runStub(c.env, tenant, runId).get());
    return c.json({ deliveries: await webhookStub(c.env, tenant).runDeliveries(runId, MAX_DELIVERIES_PAGE) }, 200);
  },
);
