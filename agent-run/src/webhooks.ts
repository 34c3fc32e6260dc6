/**
 * `agent-run webhooks list | add URL --events a,b | rm ID | deliveries ID | ping ID`: the
 * tenant's webhook endpoints (docs/WEBHOOKS.md).
 */
import { EXIT, type ExitCode, stringValue, UsageError } from "./args.ts";
import type { Context } from "./context.ts";
import { relative, table } from "./format.ts";
import { terminalText } from "./safe-text.ts";
import { WEBHOOK_EVENT_TYPES, type WebhookDelivery, type WebhookEndpoint } from "../../src/protocol/index.ts";

const ACTIONS = ["list", "add", "rm", "deliveries", "ping"] as const;
type Action = (typeof ACTIONS)[number];

/** What each action needs after it: add a URL, the others but list an endpoint id. */
const TARGET: Record<Action, string | null> = { list: null, add: "URL", rm: "ID", deliveries: "ID", ping: "ID" };

export async function webhooks(ctx: Context): Promise<ExitCode> {
  const [action, target] = ctx.args as [string, string | undefined];
  if (!(ACTIONS as readonly string[]).includes(action)) {
    throw new UsageError(`webhooks takes one of ${ACTIONS.join(", ")}; got ${JSON.stringify(action)}`, ctx.command);
  }
  const needs = TARGET[action as Action];
  if (needs === null && target !== undefined) throw new UsageError(`webhooks ${action} takes no argument`, ctx.command);
  if (needs !== null && target === undefined) throw new UsageError(`webhooks ${action} needs ${needs}`, ctx.command);
  if (action !== "add" && ctx.values.events !== undefined) {
    throw new UsageError("--events goes with webhooks add", ctx.command);
  }
  const path = target === undefined ? "" : `/${encodeURIComponent(target)}`;
  switch (action as Action) {
    case "list":
      return list(ctx);
    case "add":
      return add(ctx, target as string);
    case "rm": {
      const removed = (await ctx.api.call<{ id: string }>("DELETE", `/v1/webhooks${path}`)).body;
      if (ctx.values.json) ctx.json(removed);
      else ctx.print(`removed ${removed.id}`);
      return EXIT.ok;
    }
    case "deliveries": {
      const { deliveries } = (
        await ctx.api.call<{ deliveries: WebhookDelivery[] }>("GET", `/v1/webhooks${path}/deliveries`)
      ).body;
      printDeliveries(ctx, deliveries);
      return EXIT.ok;
    }
    case "ping": {
      const delivery = (await ctx.api.call<WebhookDelivery>("POST", `/v1/webhooks${path}/ping`)).body;
      if (ctx.values.json) ctx.json(delivery);
      else ctx.print(`ping ${delivery.id} queued (agent-run webhooks deliveries ${delivery.webhookId})`);
      return EXIT.ok;
    }
  }
}

async function list(ctx: Context): Promise<ExitCode> {
  const { webhooks } = (await ctx.api.call<{ webhooks: WebhookEndpoint[] }>("GET", "/v1/webhooks")).body;
  if (ctx.values.json) {
    for (const webhook of webhooks) ctx.json(webhook);
    return EXIT.ok;
  }
  if (webhooks.length === 0) {
    ctx.print("no webhooks (add one: agent-run webhooks add URL --events run.waiting,run.failed)");
    return EXIT.ok;
  }
  const now = Date.now();
  ctx.print(
    table([
      ["ID", "URL", "EVENTS", "CREATED", "STATE"],
      ...webhooks.map((w) => [
        w.id,
        terminalText(w.url),
        w.events.join(","),
        relative(w.createdAt, now),
        w.disabledAt === null ? "enabled" : `disabled (410) ${relative(w.disabledAt, now)}`,
      ]),
    ]),
  );
  return EXIT.ok;
}

async function add(ctx: Context, url: string): Promise<ExitCode> {
  const text = stringValue(ctx.values, "events");
  if (text === undefined) {
    throw new UsageError(
      `webhooks add needs --events, a comma-separated list of ${WEBHOOK_EVENT_TYPES.join(", ")}`,
      ctx.command,
    );
  }
  const events = text
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  const unknown = events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (events.length === 0 || unknown.length > 0) {
    const what = unknown.length > 0 ? `unknown event ${unknown.join(", ")}` : "no events";
    throw new UsageError(`--events: ${what}; choose from ${WEBHOOK_EVENT_TYPES.join(", ")}`, ctx.command);
  }
  const created = (
    await ctx.api.call<WebhookEndpoint & { secret: string }>("POST", "/v1/webhooks", {
      url,
      events: [...new Set(events)],
    })
  ).body;
  if (ctx.values.json) {
    ctx.json(created);
    return EXIT.ok;
  }
  ctx.print(`webhook  ${created.id}`);
  ctx.print(`url      ${terminalText(created.url)}`);
  ctx.print(`events   ${created.events.join(",")}`);
  ctx.print(`secret   ${created.secret}`);
  ctx.print("         (shown once: verify deliveries with it, as Standard Webhooks describes)");
  return EXIT.ok;
}

function printDeliveries(ctx: Context, deliveries: WebhookDelivery[]): void {
  if (ctx.values.json) {
    for (const delivery of deliveries) ctx.json(delivery);
    return;
  }
  if (deliveries.length === 0) {
    ctx.print("no deliveries yet");
    return;
  }
  const now = Date.now();
  ctx.print(
    table([
      ["ID", "TYPE", "RUN", "STATE", "ATTEMPTS", "LAST", "NEXT TRY"],
      ...deliveries.map((d) => [
        d.id,
        d.type,
        d.runId ?? "-",
        d.state,
        String(d.attempts),
        d.lastStatus !== null ? String(d.lastStatus) : d.lastError === null ? "-" : terminalText(d.lastError),
        d.nextAttemptAt === null ? "-" : relative(d.nextAttemptAt, now),
      ]),
    ]),
  );
}
