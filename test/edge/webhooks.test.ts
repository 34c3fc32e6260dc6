import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { WEBHOOK_EVENT_TYPES, type WebhookDelivery } from "../../src/protocol/index.ts";
import { RunMachine } from "../../src/run/run-machine.ts";
import { runRecord } from "../../src/run/run-record.ts";
import { signedHeaders } from "../../src/webhooks/signing.ts";
import { waitFor } from "../support/wait.ts";
import { agentEvent, claim } from "./sockets.ts";
import { call, createRun, json, KEY_B, runObject, timers, travel } from "./helpers.ts";

// Nothing listens on port 9 here: every attempt fails at once, so retries and the retry window
// show without a receiver. Real deliveries to a real receiver: test/edge/dev/webhooks.test.ts.
const UNREACHABLE = "http://127.0.0.1:9/hook";

const webhookObject = () => env.WEBHOOKS.get(env.WEBHOOKS.idFromName("tenant-a"));

async function register(events: string[], url = UNREACHABLE): Promise<{ id: string; secret: string }> {
  return json(await call("/v1/webhooks", { method: "POST", json: { url, events } }), 201);
}

async function notifications(runId: string): Promise<WebhookDelivery[]> {
  return (await json<{ deliveries: WebhookDelivery[] }>(await call(`/v1/runs/${runId}/notifications`), 200)).deliveries;
}

async function deliveries(webhookId: string): Promise<WebhookDelivery[]> {
  return (await json<{ deliveries: WebhookDelivery[] }>(await call(`/v1/webhooks/${webhookId}/deliveries`), 200))
    .deliveries;
}

const outboxKeys = (runId: string) =>
  runInDurableObject(runObject(runId), (_instance, state) =>
    state.storage.sql
      .exec<{ dedupe_key: string }>("SELECT dedupe_key FROM outbox ORDER BY seq")
      .toArray()
      .map((row) => row.dedupe_key),
  );

/** Moves every pending delivery of the tenant `ms` earlier, then rings the webhook object's alarm. */
async function ringWebhooks(ms: number): Promise<void> {
  await runInDurableObject(webhookObject(), (_instance, state) => {
    state.storage.sql.exec(
      "UPDATE deliveries SET next_attempt_at = next_attempt_at - ?, give_up_at = give_up_at - ?",
      ms,
      ms,
    );
  });
  expect(await runDurableObjectAlarm(webhookObject())).toBe(true);
}

/** The delivery once its log has `attempts` tries (an attempt in flight has not counted yet); bounded. */
function attemptsReach(webhookId: string, deliveryId: string, attempts: number): Promise<WebhookDelivery> {
  return waitFor(
    `delivery ${deliveryId} to reach ${attempts} attempts`,
    async () => {
      const found = (await deliveries(webhookId)).find((d) => d.id === deliveryId);
      return found && found.attempts >= attempts ? found : undefined;
    },
    10_000,
    20,
  );
}

/** The run's deliveries to one endpoint once there are `count`; bounded. */
function notificationsReach(runId: string, webhookId: string, count: number): Promise<WebhookDelivery[]> {
  return waitFor(
    `run ${runId} to have ${count} deliveries to ${webhookId}`,
    async () => {
      const found = (await notifications(runId)).filter((d) => d.webhookId === webhookId);
      return found.length >= count ? found : undefined;
    },
    10_000,
    20,
  );
}

describe("webhook endpoints", () => {
  it("registers an https endpoint with a whsec_ secret shown once, lists it without the secret, deletes it", async () => {
    const created = await json(
      await call("/v1/webhooks", {
        method: "POST",
        json: { url: "https://hooks.example.com/x", events: ["run.failed"] },
      }),
      201,
    );
    expect(created).toMatchObject({ url: "https://hooks.example.com/x", events: ["run.failed"], disabledAt: null });
    expect(created.id).toMatch(/^wh_[a-z0-9]+$/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(atob(created.secret.slice("whsec_".length))).toHaveLength(32);
    const listed = await json(await call("/v1/webhooks"), 200);
    expect(listed.webhooks).toContainEqual({ ...created, secret: undefined, createdAt: created.createdAt });
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    expect((await json(await call("/v1/webhooks", { key: KEY_B }), 200)).webhooks).toEqual([]);
    expect(await json(await call(`/v1/webhooks/${created.id}`, { method: "DELETE", key: KEY_B }), 404)).toMatchObject({
      error: { code: "not_found" },
    });
    expect(await json(await call(`/v1/webhooks/${created.id}`, { method: "DELETE" }), 200)).toEqual({
      id: created.id,
      deleted: true,
    });
    expect(await json(await call(`/v1/webhooks/${created.id}`, { method: "DELETE" }), 404)).toMatchObject({
      error: { code: "not_found" },
    });
  });

  it.each([
    [{ url: "http://hooks.example.com/x", events: ["run.failed"] }, 422, "invalid_webhook_url"],
    [{ url: "http://10.0.0.7/x", events: ["run.failed"] }, 422, "invalid_webhook_url"],
    [{ url: "ftp://hooks.example.com/x", events: ["run.failed"] }, 422, "invalid_webhook_url"],
    [{ url: "https://user:pw@hooks.example.com/x", events: ["run.failed"] }, 422, "invalid_webhook_url"],
    [{ url: "not a url", events: ["run.failed"] }, 422, "invalid_webhook_url"],
    [{ url: "https://hooks.example.com/x", events: [] }, 422, "invalid_body"],
    [{ url: "https://hooks.example.com/x", events: ["run.exploded"] }, 422, "invalid_body"],
    [{ url: "https://hooks.example.com/x", events: ["run.failed", "run.failed"] }, 422, "invalid_body"],
    [{ url: "https://hooks.example.com/x", events: ["run.failed"], secret: "mine" }, 422, "invalid_body"],
  ])("refuses %j with %i %s and stores nothing", async (body, status, code) => {
    const before = await json(await call("/v1/webhooks"), 200);
    expect(await json(await call("/v1/webhooks", { method: "POST", json: body }), status)).toMatchObject({
      error: { code },
    });
    expect(await json(await call("/v1/webhooks"), 200)).toEqual(before);
  });

  it("the OpenAPI document describes each message under `webhooks`, with its payload and signed headers", async () => {
    const document = await json(await call("/openapi.json", { key: null }), 200);
    expect(Object.keys(document.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES, "webhook.ping"].sort());
    const cancelled = document.webhooks["run.cancelled"].post;
    expect(cancelled.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/WebhookPayload",
    });
    expect(cancelled.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      "webhook-id",
      "webhook-signature",
      "webhook-timestamp",
    ]);
  });

  it("signs as Standard Webhooks specifies: the spec's own verifier accepts, and refuses a changed body", async () => {
    const { secret } = await register(["run.failed"]);
    const body = JSON.stringify({ type: "run.failed", timestamp: new Date().toISOString(), data: { run: null } });
    const headers = signedHeaders(secret, "msg_abc", Date.now(), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
  });
});

describe("webhook deliveries", () => {
  it("a cancel commits its notice with the status change; a run object that dies before sending it sends it from its alarm", async () => {
    const hook = await register(["run.cancelled"]);
    const { run } = await createRun();
    await runInDurableObject(runObject(run.id), (_instance, state) => {
      state.storage.transactionSync(() => {
        new RunMachine(state.storage.sql, Date.now(), () => false).cancel("~crash", "crash test", undefined);
      });
    });
    expect(await outboxKeys(run.id)).toEqual(["webhooks:run.cancelled:once"]);
    expect(await notifications(run.id)).toEqual([]);

    await travel(run.id, 1_000);
    expect(await runDurableObjectAlarm(runObject(run.id))).toBe(true);
    expect(await outboxKeys(run.id)).toEqual([]);
    expect((await timers(run.id)).map((t) => t.kind)).not.toContain("outbox");
    const [delivery, ...rest] = await notifications(run.id);
    expect(rest).toEqual([]);
    expect(delivery).toMatchObject({ webhookId: hook.id, type: "run.cancelled", runId: run.id, state: "pending" });
    expect(delivery?.id).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it("a notice sent again (its acknowledgement lost) adds no second delivery", async () => {
    const hook = await register(["run.cancelled"]);
    const { run } = await createRun();
    await call(`/v1/runs/${run.id}/cancel`, { method: "POST", json: {} });
    const first = await deliveries(hook.id);
    expect(first.filter((d) => d.runId === run.id)).toHaveLength(1);
    // The same row once more, as the run's outbox would send it after a crash.
    const notice = await runInDurableObject(runObject(run.id), (_instance, state) => {
      const machine = new RunMachine(state.storage.sql, Date.now(), () => false);
      return {
        tenant: "tenant-a",
        runId: run.id,
        type: "run.cancelled" as const,
        occurredAt: Date.now(),
        run: runRecord(machine),
      };
    });
    const again = { ...notice, webhookId: (first.find((d) => d.runId === run.id) as WebhookDelivery).id };
    expect(await webhookObject().notice(again)).toEqual({ ok: true, value: { deliveries: 0 } });
    expect((await deliveries(hook.id)).map((d) => [d.id, d.runId])).toEqual(first.map((d) => [d.id, d.runId]));
  });

  it("an approval asked makes run.waiting; a budget cancel sends run.budget_exceeded and run.cancelled, each its own id", async () => {
    const hook = await register(["run.waiting", "run.cancelled", "run.budget_exceeded"]);
    const created = await createRun({
      budget: { maxTokens: 100 },
      timeouts: { approvalMs: 60_000, heartbeatMs: 600_000 },
    });
    const { runner, epoch } = await claim(created.run.id, created.runnerToken);
    runner.send({
      type: "events",
      epoch,
      events: [agentEvent(1, "approval.requested", { requestId: "req-1", tool: "shell" })],
    });
    await runner.next("ack");
    // The agent's usage passes the budget: the run is cancelled budget_exceeded (src/run/usage.ts).
    runner.send({
      type: "events",
      epoch,
      events: [agentEvent(2, "agent.usage", { inputTokens: 80, outputTokens: 40 })],
    });
    expect(await runner.next("rejected")).toMatchObject({ reason: "terminal-run", status: "cancelled" });
    // The runner hears of the end before the run's outbox is handed over: wait (bounded) for all three.
    const sent = await notificationsReach(created.run.id, hook.id, 3);
    expect(sent.map((d) => d.type)).toEqual(["run.waiting", "run.budget_exceeded", "run.cancelled"]);
    expect(new Set(sent.map((d) => d.id)).size).toBe(3);
    const payloads = await runInDurableObject(webhookObject(), (_instance, state) =>
      sent.map((d) =>
        JSON.parse(
          state.storage.sql.exec<{ body: string }>("SELECT body FROM messages WHERE webhook_id = ?", d.id).one().body,
        ),
      ),
    );
    expect(payloads.map((p) => [p.type, p.data.run.id, p.data.run.status])).toEqual([
      ["run.waiting", created.run.id, "waiting"],
      ["run.budget_exceeded", created.run.id, "cancelled"],
      ["run.cancelled", created.run.id, "cancelled"],
    ]);
    expect(payloads[2].data.run.outcome).toMatchObject({ status: "cancelled", error: { code: "budget_exceeded" } });
  });

  it("a failing receiver is retried with doubling delays, then failed at the end of the retry window", async () => {
    const hook = await register(["run.cancelled"]);
    const { run } = await createRun();
    await call(`/v1/runs/${run.id}/cancel`, { method: "POST", json: {} });
    const delivery = (await deliveries(hook.id)).find((d) => d.runId === run.id) as WebhookDelivery;
    const base = 5_000; // WEBHOOK_RETRY_BASE_MS's default
    // The first try is due at once: the runtime may ring the alarm itself before the test does.
    await runDurableObjectAlarm(webhookObject());
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) await ringWebhooks(base * 2 ** (attempt - 2) * 1.25);
      const now = await attemptsReach(hook.id, delivery.id, attempt);
      expect(now).toMatchObject({ state: "pending", attempts: attempt, lastStatus: null });
      expect(now.log.map((a) => a.attempt)).toEqual(Array.from({ length: attempt }, (_, i) => i + 1));
      const last = now.log[attempt - 1] as { at: string; durationMs: number };
      const wait = Date.parse(now.nextAttemptAt as string) - Date.parse(last.at);
      // The wait after attempt n is base·2^(n−1), stretched by up to 25% at random.
      expect(wait).toBeGreaterThanOrEqual(base * 2 ** (attempt - 1));
      expect(wait).toBeLessThanOrEqual(base * 2 ** (attempt - 1) * 1.25 + last.durationMs + 1_000);
    }
    // A day later the window (24 h by default) has ended: the next failure fails it for good.
    await ringWebhooks(24 * 60 * 60 * 1000);
    const failed = await attemptsReach(hook.id, delivery.id, 4);
    expect(failed).toMatchObject({ state: "failed", attempts: 4, nextAttemptAt: null });
    expect(failed.log.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(failed.log.every((a) => a.status === null && typeof a.error === "string")).toBe(true);

    // Redelivery: pending again under the same webhook-id, with its log kept.
    const again = await json<WebhookDelivery>(
      await call(`/v1/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`, { method: "POST" }),
      202,
    );
    expect(again).toMatchObject({ id: delivery.id, state: "pending", attempts: 4 });
    expect(
      await json(await call(`/v1/webhooks/${hook.id}/deliveries/msg_nope/redeliver`, { method: "POST" }), 404),
    ).toMatchObject({ error: { code: "not_found" } });
  });

  it("a ping is a webhook.ping delivery in the endpoint's log; unknown endpoints answer 404", async () => {
    const hook = await register(["run.failed"]);
    const ping = await json<WebhookDelivery>(await call(`/v1/webhooks/${hook.id}/ping`, { method: "POST" }), 202);
    expect(ping).toMatchObject({
      webhookId: hook.id,
      type: "webhook.ping",
      runId: null,
      state: "pending",
      attempts: 0,
    });
    expect((await deliveries(hook.id)).map((d) => d.id)).toEqual([ping.id]);
    expect(await json(await call("/v1/webhooks/wh_nope/ping", { method: "POST" }), 404)).toMatchObject({
      error: { code: "not_found" },
    });
    expect(await json(await call("/v1/webhooks/NOPE/deliveries"), 400)).toMatchObject({
      error: { code: "invalid_path" },
    });
  });
});
