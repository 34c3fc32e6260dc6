import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { ALPHA, useConsole } from "./harness.ts";

/** Tokens and cost on the run page, the list's Cost column, and tag filters in the list's URL. */
const t = useConsole();

describe("usage in the console", () => {
  it("the run page shows tokens, cost and budget; the list a Cost column and ?tag= filters", async () => {
    const spent = await t.alpha.create("cost-1", { tags: ["nightly", "web"], budget: { maxCostUsd: 5 } });
    const afterFirst = new Date(Date.parse(spent.run.createdAt) + 1).toISOString();
    await waitFor("the clock to pass cost-1's creation", () => Date.now() > Date.parse(afterFirst) + 5);
    await t.alpha.create("cost-2", { tags: ["nightly"], metadata: { repo: "web" } });
    await t.alpha.create("cost-3");
    const runner = await t.alpha.runner(spent);
    t.runners.push(runner);
    await runner.send([
      { type: "agent.usage", data: { inputTokens: 1200, cachedInputTokens: 800, outputTokens: 90, costUsd: 0.0042 } },
    ]);

    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/?tag=nightly"));
    await page.locator("tr[data-run-id='cost-1'] .cost-cell", { hasText: "$0.0042" }).waitFor();
    await page.locator("tr[data-run-id='cost-2'] .cost-cell", { hasText: "—" }).waitFor();
    expect(await page.locator("tr[data-run-id='cost-3']").count()).toBe(0);
    await page.getByLabel("Tags").fill("nightly web");
    await waitFor("only the run with both tags", async () => (await page.locator("table.runs tbody tr").count()) === 1);
    expect(new URL(page.url()).searchParams.getAll("tag")).toEqual(["nightly", "web"]);

    // Metadata and creation-time filters are asked of the server and kept in the URL under its names.
    await page.goto(t.url("/"));
    await page.getByLabel("Tags").fill("");
    await page.getByLabel("Metadata").fill("repo=web");
    await waitFor("only the run with metadata repo=web", async () => {
      const ids = await page.locator("table.runs tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.runId));
      return ids.length === 1 && ids[0] === "cost-2";
    });
    expect(new URL(page.url()).searchParams.get("meta.repo")).toBe("web");
    await page.goto(t.url(`/?createdAfter=${encodeURIComponent(afterFirst)}`));
    await waitFor("the runs created after cost-1", async () => {
      const ids = await page.locator("table.runs tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.runId));
      return ids.join(" ") === "cost-3 cost-2";
    });
    expect(await page.getByLabel("Created after").inputValue()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);

    await page.goto(t.url("/runs/cost-1"));
    const tokens = page.locator(".fact", { hasText: "Tokens" });
    await tokens.locator("dd", { hasText: "1,200 in (800 cached) · 90 out" }).waitFor();
    expect(await page.locator(".fact", { hasText: "Cost" }).locator("dd").textContent()).toBe("$0.0042 of budget $5");
    // A report arriving while the page is open moves the totals.
    await runner.send([{ type: "agent.usage", data: { inputTokens: 300, outputTokens: 10, costUsd: 0.0008 } }]);
    await tokens.locator("dd", { hasText: "1,500 in (800 cached) · 100 out" }).waitFor();
    await page.locator(".fact", { hasText: "Cost" }).locator("dd", { hasText: "$0.005" }).waitFor();
  });
});
