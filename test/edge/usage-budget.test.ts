import { describe, expect, it } from "vitest";
import { CLOSE_REJECTED } from "../../src/protocol/index.ts";
import { allEvents, call, createRun, getRun, json } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

const usage = (sourceSeq: number, data: unknown) => agentEvent(sourceSeq, "agent.usage", data);
const today = () => new Date().toISOString().slice(0, 10);

describe("usage totals", () => {
  it("agent.usage deltas (and another event's agentUsage) sum exactly into the record, overall and per generation; a resend counts once", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    const batch = [
      usage(1, { inputTokens: 100, cachedInputTokens: 40, outputTokens: 7, model: "m-1", costUsd: 0.1 }),
      agentEvent(2),
      usage(3, { inputTokens: 5, outputTokens: 3, reasoningTokens: 2, costUsd: 0.2 }),
      usage(4, { inputTokens: -5 }),
      agentEvent(5, "RUN_FINISHED", { threadId: "t", runId: "r", agentUsage: { outputTokens: 1000, costUsd: 0.7 } }),
    ];
    runner.send({ type: "events", epoch, events: batch });
    expect(await runner.next("ack")).toMatchObject({ highestSourceSeq: 5 });
    // The same batch again is a duplicate: nothing is counted twice.
    runner.send({ type: "events", epoch, events: batch });
    await runner.next("ack");
    const record = await getRun(run.id);
    const total = {
      inputTokens: 105,
      cachedInputTokens: 40,
      outputTokens: 1010,
      reasoningTokens: 2,
      costUsd: 1,
      model: "m-1",
    };
    expect(record.usage).toEqual({ total, generations: [{ generation: 1, ...total }] });
    // The stored transcript holds the reports as sent, the unfit one too.
    const runnerEvents = (await allEvents(run.id)).filter((event) => event.source === "runner");
    expect(runnerEvents.map((event) => [event.sourceSeq, event.type, event.data])).toEqual(
      batch.map((event) => [event.sourceSeq, event.type, event.data]),
    );
    const page = await json(await call(`/v1/runs?limit=200`), 200);
    const listed = page.runs.find((listing: { runId: string }) => listing.runId === run.id);
    expect(listed.usage).toEqual({
      inputTokens: 105,
      cachedInputTokens: 40,
      outputTokens: 1010,
      reasoningTokens: 2,
      costUsd: 1,
    });
    runner.close();
  });

  it("a run with no reports has zero totals and no stated cost", async () => {
    const { run } = await createRun();
    expect(run.usage).toEqual({
      total: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, costUsd: null, model: null },
      generations: [],
    });
    expect(run.budget).toBeNull();
    expect(run.tags).toEqual([]);
  });
});

describe("budgets", () => {
  it("the batch that passes maxTokens cancels the run budget_exceeded, once; the runner is told to cancel", async () => {
    const { run, runnerToken } = await createRun({
      budget: { maxTokens: 100 },
      timeouts: { heartbeatMs: 600_000 },
    });
    expect(run.budget).toEqual({ maxTokens: 100 });
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [usage(1, { inputTokens: 60, outputTokens: 40 })] });
    await runner.next("ack");
    expect((await getRun(run.id)).status).toBe("running");
    runner.send({ type: "events", epoch, events: [usage(2, { outputTokens: 1 }), agentEvent(3)] });
    const command = await runner.next("command");
    expect(command).toMatchObject({ kind: "cancel", commandId: "~budget_exceeded" });
    expect(await runner.next("rejected")).toMatchObject({ reason: "terminal-run", status: "cancelled" });
    expect((await runner.waitClosed()).code).toBe(CLOSE_REJECTED);
    const ended = await getRun(run.id);
    expect(ended).toMatchObject({
      status: "cancelled",
      outcome: { status: "cancelled", error: { code: "budget_exceeded" } },
    });
    expect(ended.usage.total).toMatchObject({ inputTokens: 60, outputTokens: 41 });
    const events = await allEvents(run.id);
    expect(events.map((event) => [event.source, event.sourceSeq ?? null, event.type])).toEqual([
      ["control", null, "run.created"],
      ["control", null, "run.claimed"],
      ["runner", 1, "agent.usage"],
      ["runner", 2, "agent.usage"],
      ["runner", 3, "TEXT_MESSAGE_CONTENT"],
      ["control", null, "command.queued"],
      ["control", null, "run.finished"],
    ]);
    expect(events.filter((event) => event.type === "run.finished")).toHaveLength(1);
  });

  it("maxCostUsd compares exact nano-dollar sums: reaching the budget is not passing it", async () => {
    const { run, runnerToken } = await createRun({ budget: { maxCostUsd: 0.3 }, timeouts: { heartbeatMs: 600_000 } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [usage(1, { costUsd: 0.1 }), usage(2, { costUsd: 0.2 })] });
    await runner.next("ack");
    expect((await getRun(run.id)).status).toBe("running");
    runner.send({ type: "events", epoch, events: [usage(3, { costUsd: 0.000000001 })] });
    await runner.next("rejected");
    expect(await getRun(run.id)).toMatchObject({
      status: "cancelled",
      outcome: { error: { code: "budget_exceeded" } },
      usage: { total: { costUsd: 0.300000001 } },
    });
  });

  it("a bad budget or bad tags are refused 422 and create nothing", async () => {
    for (const body of [
      { budget: { maxTokens: 0 } },
      { budget: { maxCostUsd: -1 } },
      { budget: { maxTokens: 10, extra: 1 } },
      { tags: ["ok", "ok"] },
      { tags: ["has space"] },
      { tags: Array.from({ length: 11 }, (_, n) => `t${n}`) },
      { tags: ["x".repeat(65)] },
      { tags: "solo" },
    ]) {
      const runId = `refused-${crypto.randomUUID()}`;
      const refused = await json(await call("/v1/runs", { method: "POST", json: { runId, ...body } }), 422);
      expect(refused.error.code).toBe("invalid_body");
      await json(await call(`/v1/runs/${runId}`), 404);
    }
  });
});

describe("GET /v1/usage", () => {
  it("sums the tenant's reports by day, agent and tag", async () => {
    const tenantKey = "key-b";
    const agent = `agent-${crypto.randomUUID()}`;
    const tag = `t-${crypto.randomUUID().slice(0, 8)}`;
    const before = await json(await call(`/v1/usage?groupBy=tag`, { key: tenantKey }), 200);
    const { run, runnerToken } = await createRun(
      { agent: { name: agent }, tags: [tag], timeouts: { heartbeatMs: 600_000 } },
      tenantKey,
    );
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [usage(1, { inputTokens: 11, outputTokens: 2, costUsd: 0.5 })] });
    await runner.next("ack");
    const byAgent = await json(await call(`/v1/usage?groupBy=agent&from=${today()}`, { key: tenantKey }), 200);
    expect(byAgent.groups.find((group: { key: string }) => group.key === agent)).toEqual({
      key: agent,
      inputTokens: 11,
      cachedInputTokens: 0,
      outputTokens: 2,
      reasoningTokens: 0,
      costUsd: 0.5,
      runs: 1,
    });
    const byTag = await json(await call(`/v1/usage?groupBy=tag`, { key: tenantKey }), 200);
    expect(byTag.groups.find((group: { key: string }) => group.key === tag)).toMatchObject({ inputTokens: 11 });
    expect(byTag.total.inputTokens).toBe(before.total.inputTokens + 11);
    const byDay = await json(
      await call(`/v1/usage?groupBy=day&from=${today()}&to=${today()}`, { key: tenantKey }),
      200,
    );
    expect(byDay.groups.map((group: { key: string }) => group.key)).toEqual([today()]);
    for (const bad of [
      "groupBy=week",
      "from=2026-13-01",
      "from=2026-02-01&to=2026-01-01",
      "from=2020-01-01&to=2026-01-01",
    ]) {
      expect((await json(await call(`/v1/usage?${bad}`, { key: tenantKey }), 400)).error.code).toBe("invalid_query");
    }
    runner.close();
  });
});
