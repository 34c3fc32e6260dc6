import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookDelivery } from "../../../src/protocol/index.ts";
import { Api } from "../../support/api.ts";
import { waitFor } from "../../support/wait.ts";
import { WebhookReceiver } from "../../support/webhook-receiver.ts";
import { type DevServer, startWranglerDev } from "../../support/wrangler-dev.ts";

// Real deliveries: a real `wrangler dev` (ALLOW_HTTP_WEBHOOKS from .dev.vars) posting to a real
// node:http receiver on loopback, signatures checked with the Standard Webhooks library, and the
// edge killed with kill -9 between a committed event and its delivery.

const BASE_MS = 300;
const RETRY_FOR_MS = 5_000;
const ATTEMPT_TIMEOUT_MS = 500;

let edge: DevServer;
let receiver: WebhookReceiver;
const api = new Api(() => edge.url);

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  edge = await startWranglerDev({
    WEBHOOK_RETRY_BASE_MS: String(BASE_MS),
    WEBHOOK_RETRY_FOR_MS: String(RETRY_FOR_MS),
    WEBHOOK_ATTEMPT_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
  });
});
afterAll(async () => {
  await edge?.stop();
  await receiver?.stop();
});

async function register(path: string, events: string[]): Promise<{ id: string; secret: string }> {
  return api.ok("POST", "/v1/webhooks", { url: receiver.url(path), events });
}

async function deliveriesOf(webhookId: string): Promise<WebhookDelivery[]> {
  return (await api.ok<{ deliveries: WebhookDelivery[] }>("GET", `/v1/webhooks/${webhookId}/deliveries`)).deliveries;
}

async function cancelledRun(): Promise<string> {
  const { run } = await api.createRun();
  await api.cancel(run.id);
  return run.id;
}

describe("webhook deliveries to a real receiver", () => {
  it("a receiver failing twice then accepting gets each (run, event) once after dedupe, signed, retries spaced as documented", async () => {
    const path = "/flaky";
    receiver.behave(path, { kind: "fail", times: 2 });
    const hook = await register(path, ["run.cancelled"]);
    const runs = [await cancelledRun(), await cancelledRun(), await cancelledRun()];
    await waitFor(
      "three accepted deliveries at /flaky",
      () => receiver.to(path).filter((r) => r.status === 200).length >= 3,
      20_000,
    );

    const requests = receiver.to(path);
    for (const request of requests) expect(WebhookReceiver.verify(request, hook.secret)).toBeTruthy();
    const accepted = [...receiver.accepted.values()].filter((r) => r.path === path);
    const payloads = accepted.map((r) => JSON.parse(r.body));
    expect(payloads.map((p) => [p.type, p.data.run.id, p.data.run.status]).sort()).toEqual(
      runs.map((id) => ["run.cancelled", id, "cancelled"]).sort(),
    );
    // Three attempts per message, one webhook-id for all three.
    for (const { id } of accepted) {
      const attempts = requests.filter((r) => r.id === id);
      expect(attempts.map((r) => r.status)).toEqual([500, 500, 200]);
      const gaps = attempts.slice(1).map((r, i) => r.arrivedAt - (attempts[i] as { arrivedAt: number }).arrivedAt);
      // After failed attempt n the next waits base·2^(n−1), plus up to 25% jitter (and the runtime's latency).
      gaps.forEach((gap, i) => {
        expect(gap).toBeGreaterThanOrEqual(BASE_MS * 2 ** i - 20);
        expect(gap).toBeLessThan(BASE_MS * 2 ** i * 1.25 + 1_500);
      });
    }
    const log = await deliveriesOf(hook.id);
    expect(log.map((d) => [d.state, d.attempts, d.log.map((a) => a.status)])).toEqual(
      runs.map(() => ["succeeded", 3, [500, 500, 200]]),
    );

    // A redelivery comes under the same webhook-id: the receiver's dedupe leaves one accepted message.
    const first = log[0] as WebhookDelivery;
    await api.ok("POST", `/v1/webhooks/${hook.id}/deliveries/${first.id}/redeliver`);
    await waitFor("the redelivery", () => receiver.to(path).filter((r) => r.id === first.id).length === 4, 10_000);
    expect([...receiver.accepted.values()].filter((r) => r.path === path)).toHaveLength(3);
  });

  it("a receiver that never answers: each attempt times out, and the delivery is failed at the bound, in the log", async () => {
    const path = "/never";
    receiver.behave(path, { kind: "never" });
    const hook = await register(path, ["run.cancelled"]);
    const runId = await cancelledRun();
    const failed = await waitFor(
      "the delivery to /never to fail",
      async () => (await deliveriesOf(hook.id)).find((d) => d.runId === runId && d.state === "failed"),
      RETRY_FOR_MS + 15_000,
      100,
    );
    expect(failed.attempts).toBeGreaterThanOrEqual(3);
    expect(failed.log.every((a) => a.status === null && a.error === `no answer within ${ATTEMPT_TIMEOUT_MS} ms`)).toBe(
      true,
    );
    expect(failed.nextAttemptAt).toBeNull();
    const lastTry = Date.parse((failed.log.at(-1) as { at: string }).at);
    expect(lastTry).toBeLessThanOrEqual(Date.parse(failed.giveUpAt));
    expect(receiver.to(path)).toHaveLength(failed.attempts);
  });

  it("410 Gone disables the endpoint: nothing more is sent, and a ping is refused", async () => {
    const path = "/gone";
    receiver.behave(path, { kind: "gone" });
    const hook = await register(path, ["run.cancelled"]);
    const ping = await api.ok<WebhookDelivery>("POST", `/v1/webhooks/${hook.id}/ping`);
    await waitFor("the ping's 410", () => receiver.to(path).length === 1, 10_000);
    const disabled = await waitFor("the endpoint disabled", async () => {
      const listed = await api.ok<{ webhooks: Array<{ id: string; disabledAt: string | null }> }>(
        "GET",
        "/v1/webhooks",
      );
      return listed.webhooks.find((w) => w.id === hook.id && w.disabledAt !== null);
    });
    expect(disabled.disabledAt).not.toBeNull();
    await cancelledRun();
    expect((await api.request("POST", `/v1/webhooks/${hook.id}/ping`)).body).toMatchObject({
      error: { code: "webhook_disabled" },
    });
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ id: ping.id, state: "failed", lastStatus: 410 });
    expect(receiver.to(path)).toHaveLength(1);
  });

  it("an http: URL that is not loopback is refused, and nothing is stored", async () => {
    const before = await api.ok("GET", "/v1/webhooks");
    const refused = await api.request("POST", "/v1/webhooks", {
      url: "http://hooks.example.com/x",
      events: ["run.failed"],
    });
    expect(refused).toMatchObject({ status: 422, body: { error: { code: "invalid_webhook_url" } } });
    expect(await api.ok("GET", "/v1/webhooks")).toEqual(before);
  });

  it("kill -9 of the edge between a committed event and its delivery: delivered after the restart", async () => {
    const path = "/after-crash";
    // Refusing every attempt keeps the committed delivery pending across the crash.
    receiver.behave(path, { kind: "fail", times: 1_000 });
    const hook = await register(path, ["run.cancelled"]);
    const runId = await cancelledRun();
    await waitFor("a first (refused) attempt", () => receiver.to(path).length >= 1, 10_000);
    await edge.crash();
    receiver.behave(path, { kind: "ok" });
    await edge.restart();
    const accepted = await waitFor(
      "the delivery after the restart",
      () => receiver.to(path).find((r) => r.status === 200),
      30_000,
    );
    expect(WebhookReceiver.verify(accepted, hook.secret)).toMatchObject({
      type: "run.cancelled",
      data: { run: { id: runId, status: "cancelled" } },
    });
    expect(new Set(receiver.to(path).map((r) => r.id)).size).toBe(1);
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ id: accepted.id, state: "succeeded", runId });
  }, 180_000);
});
