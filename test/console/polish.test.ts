import http from "node:http";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../support/runner-client.ts";
import { TestRunner } from "../support/runner-client.ts";
import { waitFor } from "../support/wait.ts";
import { DESKTOP, PHONE, screenshot } from "./browser.ts";
import { ALPHA, statusBadge, useConsole } from "./harness.ts";

/** The runs list's columns, filters and bulk cancel; re-run; the timeline; the rough edges. */
const t = useConsole();

const toolTurn = (n: number, id: string): AgentEvent[] => [
  { type: "RUN_STARTED", data: { threadId: "t", runId: `turn-${n}` } },
  { type: "TOOL_CALL_START", data: { toolCallId: id, toolCallName: "shell" } },
  { type: "TOOL_CALL_ARGS", data: { toolCallId: id, delta: '{"command":"npm test"}' } },
  { type: "TOOL_CALL_END", data: { toolCallId: id } },
  { type: "TOOL_CALL_RESULT", data: { toolCallId: id, messageId: `m-${id}`, content: "ok" } },
  { type: "RUN_FINISHED", data: { threadId: "t", runId: `turn-${n}` } },
];

describe("runs list", () => {
  it("shows agent, duration, outcome and events; filters live in the URL; selected runs cancel together", async () => {
    for (const id of ["bulk-1", "bulk-2", "bulk-3"])
      await t.alpha.create(id, { agent: { name: id === "bulk-3" ? "claude" : "codex" } });
    const done = await t.alpha.create("list-done", { agent: { name: "codex" } });
    const runner = await t.alpha.runner(done);
    t.runners.push(runner);
    await runner.send(toolTurn(1, "c1"));
    await runner.complete({ status: "failed", exitCode: 3 });

    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/?q=bulk&agent=codex"));
    await page.locator("tr[data-run-id='bulk-1'] .agent-cell", { hasText: "codex" }).waitFor();
    await waitFor(
      "the agent filter to hide bulk-3",
      async () => (await page.locator("tr[data-run-id='bulk-3']").count()) === 0,
    );
    expect(await page.locator("table.runs tbody tr").count()).toBe(2);
    await page.getByLabel("Run id").fill("");
    await page.getByLabel("Agent").fill("");
    await page.locator("tr[data-run-id='list-done'] .outcome-cell", { hasText: "Failed · exit 3" }).waitFor();
    const done_ = page.locator("tr[data-run-id='list-done']");
    expect(Number(await done_.locator(".events-cell").textContent())).toBe((await t.alpha.events("list-done")).length);
    expect(await done_.locator(".duration-cell").textContent()).toMatch(/\d/);
    expect(new URL(page.url()).search).toBe("");
    // The status filter goes to the URL too, and a finished run cannot be selected.
    expect(await done_.locator("input[type=checkbox]").isDisabled()).toBe(true);

    await page.getByLabel("Select bulk-1").check();
    await page.getByLabel("Select bulk-2").check();
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Cancel selected (2)" }).click();
    await page.locator(".bulk-bar .notice", { hasText: "Cancelled 2 of 2." }).waitFor();
    expect((await t.alpha.getRun("bulk-1")).status).toBe("cancelled");
    expect((await t.alpha.getRun("bulk-2")).status).toBe("cancelled");
    expect((await t.alpha.getRun("bulk-3")).status).toBe("queued");
    await page.locator("select").selectOption("cancelled");
    await waitFor("?status=cancelled in the URL", () => new URL(page.url()).searchParams.get("status") === "cancelled");
  });

  it("with no runs, the empty state offers npm run demo", async () => {
    const { page } = await t.browser.open({ apiKey: "dev-key-beta" });
    await page.goto(t.url("/"));
    const empty = page.locator("[data-empty='no-runs']");
    await empty.waitFor();
    expect(await empty.locator("pre").textContent()).toBe("npm run demo");
  });
});

describe("sign-in on a development server", () => {
  it("names the dev key (from .dev.vars) on localhost, and Use it signs in; another host is told nothing", async () => {
    const { page } = await t.browser.open();
    await page.goto(t.url("/"));
    const hint = page.locator("[data-dev-hint]");
    await hint.waitFor();
    expect(await hint.textContent()).toContain("dev-key-alpha");
    await hint.getByRole("button", { name: "Use it" }).click();
    expect(await page.locator("#api-key").inputValue()).toBe("dev-key-alpha");
    // The same server asked under another name (as a deployment is): no key.
    const elsewhere = await new Promise<string>((resolve, reject) => {
      const request = http.get(t.url("/v1/dev/sign-in"), { headers: { host: "console.example.com" } }, (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve(body));
      });
      request.on("error", reject);
    });
    expect(JSON.parse(elsewhere)).toEqual({ key: null, tenant: null });
  });
});

describe("run page", () => {
  it("a queued run says how it starts: the runner-bridge command, its token only in the clipboard", async () => {
    await t.alpha.create("queued-1", { agent: { name: "codex" } });
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: t.url("") });
    await page.goto(t.url("/runs/queued-1"));
    const hint = page.locator("[data-queued-hint]");
    await hint.waitFor();
    const shown = await hint.locator("pre").textContent();
    expect(shown).toContain("--run queued-1");
    expect(shown).not.toMatch(/rt1\./);
    await hint.getByRole("button", { name: "Copy command with token" }).click();
    await hint.locator(".notice", { hasText: "Copied" }).waitFor();
    type Clipboard = { navigator: { clipboard: { readText(): Promise<string> } } };
    const copied = await page.evaluate(() => (globalThis as unknown as Clipboard).navigator.clipboard.readText());
    expect(copied).toMatch(
      /^RUNNER_BRIDGE_TOKEN=rt1\.\S+ npx runner-bridge run --edge http:\/\/\S+ --run queued-1 -- /,
    );
  });

  it("Run again makes a new run from this one and the two link each other", async () => {
    await t.alpha.create("again-src", { agent: { name: "codex" }, input: { prompt: "once more" } });
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/again-src"));
    await page.getByRole("button", { name: "Run again" }).click();
    await page.waitForURL(/\/runs\/again-src-r1$/);
    await page.locator("[data-reruns]", { hasText: "Re-run of again-src" }).waitFor();
    expect((await t.alpha.getRun("again-src-r1")).input).toEqual({ prompt: "once more" });
    await page.locator("[data-reruns] a", { hasText: "again-src" }).click();
    await page.locator("[data-reruns]", { hasText: "Run again as again-src-r1" }).waitFor();
  });

  it("the rough edges: one approval counts once, no internal ids, 1 row, no empty panel, Escape, outcome, never delivered, takeover", async () => {
    const created = await t.alpha.create("edges-1", { agent: { name: "codex" } });
    const first = await TestRunner.connect(t.server.url, "edges-1", created.runnerToken, { runnerId: "sandbox-a" });
    first.close();
    const runner = await TestRunner.connect(t.server.url, "edges-1", created.runnerToken, { runnerId: "sandbox-b" });
    t.runners.push(runner);
    await runner.send([
      { type: "approval.requested", data: { requestId: "rm-1", tool: "shell", command: "rm -rf dist" } },
    ]);
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/edges-1"));
    await page.locator("li.approval[data-request-id='rm-1']").getByRole("button", { name: "Approve" }).click();
    await waitFor("the decision to reach the runner", () => runner.commands.length >= 1);
    await page.locator("li.approval").waitFor({ state: "detached" });
    // The decision leaves a note, not an empty yellow panel.
    expect(await page.locator("section.approvals.card").count()).toBe(0);
    await page.locator(".row", { hasText: "Decision on rm-1 applied by the runner" }).waitFor();
    expect(await page.locator(".rows").textContent()).not.toContain("~approval:");
    expect(await page.locator("[data-category='approvals'] .chip-count").textContent()).toBe("1");
    await page.locator(".row", { hasText: "took over from sandbox-a (epoch 1)" }).waitFor();

    // One row found reads in the singular; the placeholder fits its box.
    const search = page.locator(".search input");
    const fits = (el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth <= el.clientWidth;
    expect(await search.evaluate(fits)).toBe(true);
    await search.fill("sandbox-a");
    const count = page.locator(".shown-count");
    await waitFor("one row shown", async () => /^1 of \d+ rows/.test((await count.textContent()) ?? ""));
    await search.fill("");

    await page.getByRole("button", { name: "Share" }).click();
    await page.locator(".share-box").waitFor();
    await page.keyboard.press("Escape");
    await page.locator(".share-box").waitFor({ state: "detached" });

    // Input typed while no runner holds the run, then the run cancelled: it was never delivered.
    runner.close();
    await waitFor("the run to lose its runner", async () => !(await t.alpha.getRun("edges-1")).runner.connected);
    await page.getByLabel("Send input to the agent").fill("too late");
    await page.keyboard.press("Enter");
    await page.locator("li.command[data-state='queued']", { hasText: "too late" }).waitFor();
    await t.alpha.ok("POST", "/v1/runs/edges-1/cancel", {});
    await statusBadge(page, "Cancelled", 20_000);
    await page.locator("li.command", { hasText: "too late" }).locator("text=never delivered").waitFor();
    const outcome = await page.locator(".outcome").textContent();
    expect(outcome).not.toMatch(/cancelled\s+cancelled/i);
  });

  it("Jump to latest, shown once the reader scrolls up, covers no row's JSON or Link button", async () => {
    const created = await t.alpha.create("jump-1");
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    const lines: AgentEvent[] = [];
    for (let n = 0; n < 120; n++) {
      lines.push({ type: "TEXT_MESSAGE_CHUNK", data: { messageId: `j${n}`, role: "assistant", delta: `line ${n}` } });
    }
    await runner.send(lines);
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/jump-1"));
    await page.locator("li.row", { hasText: "line 119" }).waitFor();
    const jump = page.locator("button.jump");
    // A render landing just after the scroll may snap the view back to the tail (it still follows
    // until the scroll event is handled), so the reader scrolls up again until the button shows.
    await waitFor("Jump to latest to show once the reader scrolls up", async () => {
      await page.locator(".transcript-scroll").evaluate((el) => el.scrollBy(0, -600));
      return (await jump.isVisible()) || undefined;
    });
    const box = await jump.boundingBox();
    if (!box) throw new Error("Jump to latest has no box");
    const overlapping: string[] = [];
    for (const button of await page.locator(".row-meta .link-button").all()) {
      const b = await button.boundingBox();
      if (b && b.x < box.x + box.width && box.x < b.x + b.width && b.y < box.y + box.height && box.y < b.y + b.height) {
        overlapping.push((await button.getAttribute("aria-label")) ?? "?");
      }
    }
    expect(overlapping).toEqual([]);
  });

  it("the timeline: turns, tool calls, approvals and runner gaps as bars linked to their rows", async () => {
    const created = await t.alpha.create("timeline-1", {
      agent: { name: "codex" },
      timeouts: { heartbeatMs: 600_000 },
    });
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    await runner.send([...toolTurn(1, "a1"), ...toolTurn(2, "a2")]);
    await runner.send([
      { type: "approval.requested", data: { requestId: "ship-1", tool: "shell", command: "npm publish" } },
    ]);
    await runner.send([
      { type: "TEXT_MESSAGE_CHUNK", data: { messageId: "note-1", role: "assistant", delta: "Waiting to publish." } },
    ]);
    const { page } = await t.browser.open({ apiKey: ALPHA, viewport: DESKTOP });
    await page.goto(t.url("/runs/timeline-1"));
    await page.locator("[data-live='live']").waitFor();
    await page.getByRole("tab", { name: "Timeline" }).click();
    await page.locator(".span-tool").first().waitFor();
    expect(await page.locator(".span-tool").count()).toBe(2);
    expect(await page.locator(".span-turn").count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator(".span-approval .span-bar.is-open").count()).toBe(1);
    expect(await page.locator(".span-gap").count()).toBe(1); // queued, before the claim
    expect(await page.locator(".span-runner").count()).toBe(1);
    await screenshot(page, "timeline-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "timeline-phone", { fullPage: true });
    await page.setViewportSize(DESKTOP);
    const second = page.locator(".span-tool").nth(1);
    const seq = Number(await second.getAttribute("data-seq"));
    await second.locator(".span-bar").click();
    await page.locator(`li.row.is-target[id='seq-${seq}']`).waitFor();
    expect(new URL(page.url()).hash).toBe(`#seq=${seq}`);
  });

  it("reads a run of 50,000 events: every span counted, only what is in view drawn", async () => {
    const created = await t.alpha.create("timeline-big", { timeouts: { heartbeatMs: 600_000 } });
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    // 8,333 turns of 6 events (a tool call in each): 49,998 events; with run.created and run.claimed 50,000.
    const turns = 8333;
    for (let from = 0; from < turns; from += 83) {
      const events: AgentEvent[] = [];
      for (let n = from; n < Math.min(turns, from + 83); n++) events.push(...toolTurn(n, `big-${n}`));
      await runner.send(events, 500);
    }
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/timeline-big"));
    await page.locator("[data-live='live']").waitFor({ timeout: 60_000 });
    await page.getByRole("tab", { name: "Timeline" }).click();
    await page.locator(".timeline-view").waitFor();
    await page.getByRole("button", { name: "Load the whole run" }).click();
    // Every turn and tool call, the runner, and the wait before its claim.
    const spans = async () => Number(await page.locator(".timeline-scroll").getAttribute("data-spans"));
    await waitFor("the whole run in the timeline", async () => (await spans()) === 2 * turns + 2, 120_000);
    expect(await page.locator(".span").count()).toBeLessThan(120);
    await page.locator(".timeline-scroll").evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await waitFor("the last spans drawn", async () => (await page.locator(".span").count()) > 0);
    expect(await page.locator(".span").count()).toBeLessThan(120);
  });
});
