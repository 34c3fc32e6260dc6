import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { alive, FIXTURES, NODE } from "./harness/bridge.ts";
import { marker, useEdge } from "./harness/context.ts";

// Each adapter's usage reports, through a real bridge into a real `wrangler dev`: the run's totals
// are exactly the provider's own, and a budget passed mid-run cancels the run with its whole tree.

const t = useEdge();
const CODEX = [NODE, path.join(FIXTURES, "fake-codex-app-server.mjs")];
const CLAUDE = [NODE, path.join(FIXTURES, "fake-claude-code.mjs")];

async function finished(runId: string) {
  return waitFor(`run ${runId} to finish`, async () => {
    const run = await t.api.getRun(runId);
    return run.finishedAt !== null ? run : undefined;
  });
}

describe("usage reports", () => {
  it("codex: token totals are the thread's, each report a difference of totals (a repeated one counts once)", async () => {
    const { run, bridge } = await t.startRun({
      agent: CODEX,
      extra: ["--adapter", "codex", "--prompt", "report usage"],
    });
    expect(await bridge.waitExit()).toBe(0);
    const final = await finished(run.id);
    const events = await t.api.runnerEvents(run.id);
    const reports = events.filter((event) => event.type === "agent.usage");
    expect(reports.map(({ data }) => ({ ...(data as object), rawEvent: undefined }))).toEqual([
      {
        inputTokens: 1200,
        cachedInputTokens: 800,
        outputTokens: 90,
        reasoningTokens: 30,
        model: "fixture-model",
        rawEvent: undefined,
      },
      { rawEvent: undefined },
      {
        inputTokens: 1500,
        cachedInputTokens: 800,
        outputTokens: 90,
        reasoningTokens: 30,
        model: "fixture-model",
        rawEvent: undefined,
      },
    ]);
    const total = {
      inputTokens: 2700,
      cachedInputTokens: 1600,
      outputTokens: 180,
      reasoningTokens: 60,
      costUsd: null,
      model: "fixture-model",
    };
    expect(final.usage).toEqual({ total, generations: [{ generation: 1, ...total }] });
  });

  it("claude-code: per-message usage, then the result's cumulative usage and cost less what was reported", async () => {
    const { run, bridge } = await t.startRun({
      agent: CLAUDE,
      extra: ["--adapter", "claude-code", "--prompt", "clean up, needs approval"],
    });
    await waitFor("the approval to be pending", async () => (await t.api.getRun(run.id)).pendingApprovals.length === 1);
    await t.api.approve(run.id, "perm-1", "approve");
    expect(await bridge.waitExit()).toBe(0);
    const final = await finished(run.id);
    // Two API messages of 12 input + 3 cache writes + 20 cache reads, 8 output each; the result adds 2 output.
    const total = {
      inputTokens: 70,
      cachedInputTokens: 40,
      outputTokens: 18,
      reasoningTokens: 0,
      costUsd: 0.0042,
      model: "fixture-model",
    };
    expect(final.usage).toEqual({ total, generations: [{ generation: 1, ...total }] });
    const events = await t.api.runnerEvents(run.id);
    const reported = events
      .filter((event) => (event.data as { agentUsage?: unknown }).agentUsage !== undefined)
      .map((event) => [event.type, (event.data as { agentUsage: unknown }).agentUsage]);
    expect(reported).toEqual([
      ["TOOL_CALL_CHUNK", { inputTokens: 35, cachedInputTokens: 20, outputTokens: 8, model: "fixture-model" }],
      ["TEXT_MESSAGE_CHUNK", { inputTokens: 35, cachedInputTokens: 20, outputTokens: 8, model: "fixture-model" }],
      ["RUN_FINISHED", { outputTokens: 2, costUsd: 0.0042, model: "fixture-model" }],
    ]);
  });

  it("ndjson: the agent's own agent.usage lines, summed exactly (costs to the nano-dollar)", async () => {
    const lines = [
      { type: "agent.usage", inputTokens: 10, outputTokens: 1, costUsd: 0.1, model: "local-1" },
      { type: "agent.usage", inputTokens: 20, cachedInputTokens: 5, costUsd: 0.2 },
      { type: "agent.usage", reasoningTokens: 3, outputTokens: 4, costUsd: 0.000000001 },
    ];
    const { run, bridge } = await t.startRun({ agent: t.agent(lines.map((line) => ({ out: JSON.stringify(line) }))) });
    expect(await bridge.waitExit()).toBe(0);
    const final = await finished(run.id);
    expect(final.usage.total).toEqual({
      inputTokens: 30,
      cachedInputTokens: 5,
      outputTokens: 5,
      reasoningTokens: 3,
      costUsd: 0.300000001,
      model: "local-1",
    });
  });
});

describe("budgets", () => {
  it("a budget passed mid-run cancels the run budget_exceeded once, and nothing of the agent survives", async () => {
    const pidFile = marker("pids");
    const report = { out: JSON.stringify({ type: "agent.usage", inputTokens: 400, outputTokens: 100 }) };
    const { run, dir, bridge } = await t.startRun({
      body: { budget: { maxTokens: 1200 } },
      // 500 tokens a report: the third passes 1,200 while the agent (and its grandchild) runs on.
      agent: t.agent([
        { spawnTree: pidFile },
        report,
        { sleepMs: 300 },
        report,
        { sleepMs: 300 },
        report,
        { sleepForever: true },
      ]),
    });
    await waitFor(
      "the agent's tree to be written",
      () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").includes(" "),
    );
    const [agentPid, grandchildPid] = fs.readFileSync(pidFile, "utf8").split(" ").map(Number) as [number, number];
    expect(await bridge.waitExit(60_000)).toBe(0);
    expect(alive(agentPid)).toBe(false);
    expect(alive(grandchildPid)).toBe(false);
    expect(fs.existsSync(dir)).toBe(false);
    const final = await t.api.getRun(run.id);
    expect(final).toMatchObject({
      status: "cancelled",
      outcome: { status: "cancelled", error: { code: "budget_exceeded" } },
    });
    expect(final.usage.total).toMatchObject({ inputTokens: 1200, outputTokens: 300 });
    const events = await t.api.events(run.id);
    expect(events.filter((event) => event.type === "agent.usage")).toHaveLength(3);
    expect(events.filter((event) => event.type === "run.finished")).toHaveLength(1);
    expect(events.filter((event) => event.type === "command.queued")).toMatchObject([
      { data: { commandId: "~budget_exceeded", type: "cancel", reason: "budget_exceeded" } },
    ]);
  });
});
