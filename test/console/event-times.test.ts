import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../support/runner-client.ts";
import { waitFor } from "../support/wait.ts";
import { ALPHA, useConsole } from "./harness.ts";

/** A run page after an outage: rows show when the agent wrote each event, and when it arrived. */
const t = useConsole();

describe("run page, event times", () => {
  it("shows the agent's time of each row, and the arrival time beside it when they differ", async () => {
    const created = await t.alpha.create("times-1", { agent: { name: "codex" } });
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    const written = [Date.now() - 5 * 60_000, Date.now() - 4 * 60_000].map((ms) => new Date(ms).toISOString());
    const events = [
      { type: "CUSTOM", data: { name: "journaled-while-away", value: 1 }, time: written[0] },
      { type: "CUSTOM", data: { name: "journaled-while-away", value: 2 }, time: written[1] },
      { type: "CUSTOM", data: { name: "live", value: 3 } },
    ] as AgentEvent[];
    await runner.send(events);
    const stored = (await t.alpha.events("times-1")).filter((e) => e.source === "runner");
    expect(stored.map((e) => e.agentTime)).toEqual([written[0], written[1], undefined]);

    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/times-1"));
    const row = (seq: number) => page.locator(`li[data-seqs="${seq}"]`);
    await waitFor("the three runner rows", async () => (await page.locator("li[data-seqs]").count()) >= 4, 15_000);
    for (const [i, event] of stored.entries()) {
      const times = row(event.seq).locator(".row-meta time");
      await expect(times.first().getAttribute("datetime")).resolves.toBe(event.agentTime ?? event.time);
      const arrival = row(event.seq).locator(".row-arrival");
      if (i < 2) {
        await expect(arrival.getAttribute("datetime")).resolves.toBe(event.time);
        await expect(arrival.textContent()).resolves.toMatch(/^arrived \d\d:\d\d:\d\d/);
      } else {
        await expect(arrival.count()).resolves.toBe(0);
      }
    }
  });
});

describe("timeline, event times", () => {
  it("spreads events journaled during an outage by the agent's time, not their one arrival", async () => {
    const created = await t.alpha.create("times-2", { agent: { name: "codex" }, timeouts: { heartbeatMs: 600_000 } });
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
    // Both tool calls arrive in one batch, as after a takeover; the agent ran them minutes apart.
    const journaled = [
      { type: "TOOL_CALL_START", data: { toolCallId: "a", toolCallName: "build" }, time: ago(4) },
      { type: "TOOL_CALL_RESULT", data: { toolCallId: "a", messageId: "m-a", content: "ok" }, time: ago(3) },
      { type: "TOOL_CALL_START", data: { toolCallId: "b", toolCallName: "test" }, time: ago(2) },
      { type: "TOOL_CALL_RESULT", data: { toolCallId: "b", messageId: "m-b", content: "ok" }, time: ago(1) },
    ];
    await runner.send(journaled as AgentEvent[]);
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/times-2"));
    await page.locator("[data-live='live']").waitFor();
    await page.getByRole("tab", { name: "Timeline" }).click();
    await page.locator(".span-tool").nth(1).waitFor();
    const tools = page.locator(".span-tool");
    for (const i of [0, 1])
      await expect(tools.nth(i).locator(".span-time").textContent()).resolves.toMatch(/^1 min 0\d s/);
    const left = async (i: number) =>
      Number.parseFloat(
        (await tools.nth(i).locator(".span-bar").getAttribute("style"))?.match(/left:\s*([\d.]+)%/)?.[1] ?? "NaN",
      );
    expect((await left(1)) - (await left(0))).toBeGreaterThan(10);
  });
});
