import { describe, expect, it } from "vitest";
import type { RunEvent, RunRecord } from "../../src/protocol/index.ts";
import { waitFor } from "../support/wait.ts";
import { screenshot } from "./browser.ts";
import { ALPHA, statusBadge, useConsole } from "./harness.ts";

/** A run whose sandbox was lost, as the page shows it while it waits in `recovering`. */
const t = useConsole();

// Short deadlines so the lost runner's lease and takeover window pass within seconds.
const QUICK = { heartbeatMs: 1000, takeoverMs: 1000 };

async function loseRunner(runId: string): Promise<void> {
  const created = await t.alpha.create(runId, { agent: { name: "codex" }, timeouts: QUICK });
  const runner = await t.alpha.runner(created);
  await runner.send([
    { type: "agent.session", data: { provider: "codex", id: "thread-7f3a" } },
    { type: "TEXT_MESSAGE_START", data: { messageId: "m1", role: "assistant" } },
    { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m1", delta: "Reading the failing test…" } },
  ]);
  runner.close();
}

describe("run page, recovery", () => {
  it("a lost run shows Recovering with its mode, generation and deadline; Fail run ends it failed", async () => {
    await loseRunner("lost-1");
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/lost-1"));
    await statusBadge(page, "Recovering", 20_000);

    // A session was reported but no checkpoint covers the events: a human decides.
    const panel = page.locator("section.recovery");
    await expect(panel.getAttribute("data-mode")).resolves.toBe("ambiguous");
    await expect(panel.textContent()).resolves.toContain("Fails (runner_lost)");
    await expect(page.getByRole("button", { name: "Resume" }).isDisabled()).resolves.toBe(true);
    const generation = page.locator(".fact", { hasText: "Generation" });
    await expect(generation.textContent()).resolves.toBe("Generation1 codex thread-7f3a");
    // The recovery is a timeline row of the transcript, not raw JSON.
    const row = page.locator("li", { hasText: "Recovering · ambiguous" }).last();
    await expect(row.textContent()).resolves.toContain("the agent session has no checkpoint");
    await screenshot(page, "run-recovering");

    await page.getByRole("button", { name: "Fail run" }).click();
    await statusBadge(page, "Failed");
    await expect(page.locator(".outcome").textContent()).resolves.toContain("recovery_declined");
    expect(await panel.count()).toBe(0);

    const run = await t.alpha.ok<RunRecord>("GET", "/v1/runs/lost-1");
    expect(run.outcome?.error?.code).toBe("recovery_declined");
    const events = await t.alpha.events("lost-1");
    const decided = events.filter((event: RunEvent) => event.type === "run.recovery.decided");
    expect(decided.map((event) => (event.data as { action: string }).action)).toEqual(["fail"]);
  });

  it("a read-only share link shows the recovery but offers no decision", async () => {
    await loseRunner("lost-2");
    const { token } = await t.alpha.ok<{ token: string }>("POST", "/v1/runs/lost-2/tokens", { role: "viewer" });
    const { page } = await t.browser.open();
    await page.goto(t.url(`/runs/lost-2#token=${token}`));
    await statusBadge(page, "Recovering", 20_000);
    await page.locator("section.recovery").waitFor();
    expect(await page.locator(".recovery-actions").count()).toBe(0);
    const run = await waitFor("the run to still be recovering", async () => {
      const record = await t.alpha.ok<RunRecord>("GET", "/v1/runs/lost-2");
      return record.status === "recovering" && record;
    });
    expect(run.recovery?.mode).toBe("ambiguous");
  });
});
