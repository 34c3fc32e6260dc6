import { describe, expect, it } from "vitest";
import { signToken } from "../../src/auth/tokens.ts";
import { devTokenSecret } from "../support/api.ts";
import { waitFor } from "../support/wait.ts";
import { PHONE, screenshot } from "./browser.ts";
import { ALPHA, useConsole } from "./harness.ts";
import type { Page } from "playwright-core";

/** The runs list and sign-in, in real chromium against a real `wrangler dev`. */
const t = useConsole();

const renderedRunIds = (page: Page) =>
  page.locator("table.runs tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run-id")));

async function listedByApi(query = "limit=25"): Promise<{ runs: { runId: string }[]; nextCursor: string | null }> {
  return t.alpha.ok("GET", `/v1/runs?${query}`);
}

describe("runs list", () => {
  it("signs in with an API key by keyboard and lists the tenant's runs newest first, none of another tenant's", async () => {
    for (const id of ["alpha-1", "alpha-2", "alpha-3"]) await t.alpha.create(id);
    for (const id of ["beta-1", "beta-2"]) await t.beta.create(id);
    const { page } = await t.browser.open();
    await page.goto(t.url("/"));
    await page.getByLabel("API key").focus();
    await page.keyboard.type(ALPHA);
    await page.keyboard.press("Enter");
    await page.locator("table.runs").waitFor();

    const expected = (await listedByApi()).runs.map((run) => run.runId);
    expect(expected.slice(0, 3)).toEqual(["alpha-3", "alpha-2", "alpha-1"]);
    expect(await renderedRunIds(page)).toEqual(expected);
    expect(await page.locator("table.runs").textContent()).not.toMatch(/beta-/);
    // The key lives in sessionStorage, never in the URL.
    expect(page.url()).not.toContain(ALPHA);
    expect(await page.evaluate("sessionStorage.getItem('agent-run-edge.apiKey')")).toBe(ALPHA);
    await expect(page.locator('tr[data-run-id="alpha-3"] .badge').textContent()).resolves.toBe("Queued");
  });

  it("shows a new run within 5 seconds without a reload", async () => {
    const { page } = await t.browser.open({ apiKey: ALPHA });
    let navigations = 0;
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    await page.goto(t.url("/"));
    await page.locator("table.runs").waitFor();
    const before = navigations;
    await t.alpha.create("appears-later");
    await page.locator('tr[data-run-id="appears-later"]').waitFor({ timeout: 5000 });
    expect(navigations).toBe(before);
    expect((await renderedRunIds(page))[0]).toBe("appears-later");
  });

  it("filters by status and pages with nextCursor", async () => {
    for (let i = 0; i < 30; i++) await t.alpha.create(`bulk-${String(i).padStart(2, "0")}`);
    for (const id of ["bulk-03", "bulk-17"]) await t.alpha.ok("POST", `/v1/runs/${id}/cancel`, {});
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/"));
    await page.locator("table.runs").waitFor();

    await page.getByLabel("Status").selectOption("cancelled");
    await waitFor("only cancelled runs listed", async () => (await renderedRunIds(page)).join() === "bulk-17,bulk-03");
    expect(await page.locator("table.runs .badge").allTextContents()).toEqual(["Cancelled", "Cancelled"]);
    expect(page.url()).toContain("status=cancelled");

    await page.getByLabel("Status").selectOption("");
    await waitFor("the unfiltered first page", async () => (await renderedRunIds(page)).length === 25);
    const first = await listedByApi();
    expect(await renderedRunIds(page)).toEqual(first.runs.map((run) => run.runId));
    await page.getByRole("button", { name: "Older →" }).click();
    const second = await listedByApi(`limit=25&cursor=${encodeURIComponent(first.nextCursor ?? "")}`);
    await waitFor("the second page", async () => (await renderedRunIds(page))[0] === second.runs[0]?.runId);
    expect(await renderedRunIds(page)).toEqual(second.runs.map((run) => run.runId));
    await page.getByRole("button", { name: "← Newer" }).click();
    await waitFor("the first page again", async () => (await renderedRunIds(page))[0] === first.runs[0]?.runId);

    // Runs in several states, for the screenshots: the list picks them up by itself.
    for (const [id, outcome] of [
      ["deploy-web", { status: "succeeded", exitCode: 0 }],
      ["migrate-db", { status: "failed", exitCode: 1, error: { code: "agent_exit", message: "exit 1" } }],
      ["fix-flaky-tests", null],
    ] as const) {
      const runner = await t.alpha.runner(await t.alpha.create(id, { agent: { name: "codex" } }));
      t.runners.push(runner);
      if (outcome) await runner.complete(outcome);
    }
    const waiting = await t.alpha.runner(await t.alpha.create("publish-release"));
    t.runners.push(waiting);
    await waiting.send([{ type: "approval.requested", data: { requestId: "r1", tool: "npm publish" } }]);
    await page.locator("tr[data-run-id='publish-release'] [data-status='waiting']").waitFor();
    // The columns read from each run's record (agent, duration, outcome, events) have all arrived.
    await waitFor("every row's record read", async () => (await page.locator("td.events-cell .muted").count()) === 0);
    await screenshot(page, "list-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "list-phone");
  });
});

describe("dead ends", () => {
  it("a refused API key shows the sign-in message and stores nothing", async () => {
    t.expectRefusals(401);
    const { page } = await t.browser.open();
    await page.goto(t.url("/"));
    await page.getByLabel("API key").fill("not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toBe("That API key was not accepted.");
    expect(await page.evaluate("sessionStorage.getItem('agent-run-edge.apiKey')")).toBeNull();
  });

  it("an unknown run says not found; a purged one says how it ended", async () => {
    t.expectRefusals(404, 410);
    await t.alpha.create("to-purge");
    await t.alpha.ok("POST", "/v1/runs/to-purge/cancel", {});
    await t.alpha.ok("DELETE", "/v1/runs/to-purge");
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/no-such-run"));
    await expect(page.locator("[data-problem='404'] h1").textContent()).resolves.toBe("Not found");
    await page.goto(t.url("/runs/to-purge"));
    const purged = page.locator("[data-problem='410']");
    await expect(purged.locator("h1").textContent()).resolves.toBe("Purged");
    expect(await purged.textContent()).toContain("was purged. It ended cancelled");
  });

  it("an expired or forged share link asks to sign in; an unknown page says so", async () => {
    t.expectRefusals(401);
    const created = await t.alpha.create("shared-run");
    const secret = devTokenSecret();
    const claims = { tenant: "alpha", runId: "shared-run", role: "viewer" as const, interact: false };
    const expired = await signToken(secret, { ...claims, exp: Date.now() - 1000 });
    const forged = await signToken("not-the-secret", { ...claims, exp: Date.now() + 60_000 });
    expect(created.viewerToken).not.toBe(forged);
    const { page } = await t.browser.open();
    await page.goto(t.url(`/runs/shared-run#token=${expired}`));
    await expect(page.locator(".signin .notice.warn").textContent()).resolves.toContain("This share link has expired");
    await page.goto(t.url(`/runs/shared-run#token=${forged}`));
    await expect(page.locator("[data-problem='401'] h1").textContent()).resolves.toBe("This share link is not valid");
    await page.getByRole("button", { name: "Sign in with an API key" }).click();
    await page.getByLabel("API key").waitFor();
    await page.goto(t.url("/nowhere/at/all"));
    await expect(page.locator("h1").textContent()).resolves.toBe("No such page");
  });
});
