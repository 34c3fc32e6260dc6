import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { useWebhookReceiver, WebhookReceiver } from "../support/webhook-receiver.ts";
import { alive } from "./harness/bridge.ts";
import { marker, useEdge } from "./harness/context.ts";

// A real agent under a real bridge asks for an approval, then reports usage past its budget:
// the tenant's receiver (node:http on loopback) hears run.waiting, run.budget_exceeded and
// run.cancelled, each once, each signed as the Standard Webhooks library checks.

const t = useEdge();
const hooks = useWebhookReceiver();

describe("webhooks from a real run", () => {
  it("an approval asked, then a budget passed: waiting, budget_exceeded and cancelled delivered once each", async () => {
    const hook = await t.api.ok<{ id: string; secret: string }>("POST", "/v1/webhooks", {
      url: hooks.receiver.url("/bridge"),
      events: ["run.waiting", "run.budget_exceeded", "run.cancelled", "run.succeeded"],
    });
    const pidFile = marker("pids");
    const report = { out: JSON.stringify({ type: "agent.usage", inputTokens: 400, outputTokens: 100 }) };
    const { run, bridge } = await t.startRun({
      body: { budget: { maxTokens: 900 } },
      agent: t.agent([
        { spawnTree: pidFile },
        { out: '{"type":"approval.requested","requestId":"r1","action":"deploy"}' },
        { readLines: 1 },
        report,
        { sleepMs: 200 },
        report,
        { sleepForever: true },
      ]),
    });
    const waiting = await waitFor("run.waiting at the receiver", () =>
      hooks.receiver.to("/bridge").find((r) => JSON.parse(r.body).type === "run.waiting"),
    );
    expect(WebhookReceiver.verify(waiting, hook.secret)).toMatchObject({
      type: "run.waiting",
      data: { run: { id: run.id, status: "waiting", pendingApprovals: [{ requestId: "r1" }] } },
    });
    await t.api.approve(run.id, "r1", "approve", "go");
    expect(await bridge.waitExit(60_000)).toBe(0);
    const [agentPid, grandchildPid] = fs.readFileSync(pidFile, "utf8").split(" ").map(Number) as [number, number];
    expect(alive(agentPid)).toBe(false);
    expect(alive(grandchildPid)).toBe(false);

    await waitFor(
      "three messages accepted at /bridge",
      () => hooks.receiver.to("/bridge").length >= 3 && hooks.receiver.accepted.size >= 3,
    );
    const accepted = [...hooks.receiver.accepted.values()].filter((r) => r.path === "/bridge");
    const payloads = accepted.map((r) => WebhookReceiver.verify(r, hook.secret) as { type: string; data: any });
    expect(payloads.map((p) => p.type)).toEqual(["run.waiting", "run.budget_exceeded", "run.cancelled"]);
    for (const payload of payloads.slice(1)) {
      expect(payload.data.run).toMatchObject({
        id: run.id,
        status: "cancelled",
        outcome: { status: "cancelled", error: { code: "budget_exceeded" } },
      });
    }
    expect(new Set(accepted.map((r) => r.id)).size).toBe(3);
    // The receiver answered before the webhook object recorded the answer: wait (bounded) for the log.
    const log = await waitFor("the run's notifications all succeeded", async () => {
      const answer = await t.api.ok<{ deliveries: Array<{ type: string; state: string; attempts: number }> }>(
        "GET",
        `/v1/runs/${run.id}/notifications`,
      );
      return answer.deliveries.every((d) => d.state === "succeeded") && answer;
    });
    expect(log.deliveries.map((d) => [d.type, d.state, d.attempts])).toEqual([
      ["run.waiting", "succeeded", 1],
      ["run.budget_exceeded", "succeeded", 1],
      ["run.cancelled", "succeeded", 1],
    ]);
  });
});
