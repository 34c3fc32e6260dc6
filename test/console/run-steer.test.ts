import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { ALPHA, statusBadge, useConsole } from "./harness.ts";
import { conversation, renderedSeqs } from "./transcript.ts";

/** Steering a run from the page, and what a read-only share link may not do. */
const t = useConsole();

const approvalRequest = {
  type: "approval.requested",
  data: { requestId: "publish-1", tool: "shell", command: "npm publish --tag next", cwd: "/work/web" },
};

describe("run page, steering", () => {
  it("Approve, input, interrupt and cancel each reach the runner as one command; states show live", async () => {
    const created = await t.alpha.create("steer-1", {
      agent: { name: "codex" },
      input: { prompt: "fix the failing tests, then publish" },
    });
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    const [first, second] = conversation(1);
    await runner.send([...(first ?? []), ...(second ?? []), approvalRequest]);

    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/steer-1"));
    const approval = page.locator("li.approval[data-request-id='publish-1']");
    await approval.waitFor();
    await page.locator("[data-live='live']").waitFor();
    await statusBadge(page, "Waiting for approval");

    await approval.getByRole("button", { name: "Approve" }).click();
    await waitFor("the runner to receive the approval", () => runner.commands.length >= 1);
    await approval.waitFor({ state: "detached" });
    await statusBadge(page, "Running");

    // By keyboard: type into the command box and press Enter; Interrupt with Enter too.
    await page.getByLabel("Send input to the agent").focus();
    await page.keyboard.type("also update the changelog");
    await page.keyboard.press("Enter");
    await waitFor("the runner to receive the input", () => runner.commands.length >= 2);
    await page.getByRole("button", { name: "Interrupt" }).press("Enter");
    await waitFor("the runner to receive the interrupt", () => runner.commands.length >= 3);
    await page.locator("li.command[data-state='applied']", { hasText: "also update the changelog" }).waitFor();

    await page.getByRole("button", { name: "Cancel run…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Reason (optional)").fill("wrong branch");
    await dialog.getByRole("button", { name: "Keep running" }).click();
    await expect(dialog.isVisible()).resolves.toBe(false);
    expect(runner.commands.length).toBe(3);
    await page.getByRole("button", { name: "Cancel run…" }).click();
    await dialog.getByLabel("Reason (optional)").focus();
    await page.keyboard.press("Enter");
    await waitFor("the runner to receive the cancel", () => runner.commands.length >= 4);
    await runner.complete({ status: "cancelled", error: { code: "cancelled", message: "wrong branch" } });
    await page.locator("[data-live='ended']").waitFor();
    await statusBadge(page, "Cancelled");
    await expect(page.locator(".outcome").textContent()).resolves.toContain("wrong branch");

    const sent = runner.commands.map(({ kind, state, text, requestId, decision, reason }) => ({
      kind,
      state,
      text,
      requestId,
      decision,
      reason,
    }));
    expect(sent).toEqual([
      {
        kind: "approval",
        state: "delivered",
        text: undefined,
        requestId: "publish-1",
        decision: "approve",
        reason: undefined,
      },
      {
        kind: "input",
        state: "delivered",
        text: "also update the changelog",
        requestId: undefined,
        decision: undefined,
        reason: undefined,
      },
      {
        kind: "interrupt",
        state: "delivered",
        text: undefined,
        requestId: undefined,
        decision: undefined,
        reason: undefined,
      },
      {
        kind: "cancel",
        state: "delivered",
        text: undefined,
        requestId: undefined,
        decision: undefined,
        reason: "wrong branch",
      },
    ]);
    const queued = (await t.alpha.events("steer-1")).filter((event) => event.type === "command.queued");
    expect(queued.map((event) => (event.data as { type: string }).type)).toEqual([
      "approval",
      "input",
      "interrupt",
      "cancel",
    ]);
    // Every command the page shows reached its final state from the log.
    expect(
      await page.locator("li.command").evaluateAll((items) => items.map((item) => item.getAttribute("data-state"))),
    ).toEqual(["applied", "applied", "applied", "applied"]);
  });

  it("a stale approval is a message, not a crash", async () => {
    t.expectRefusals(409);
    const created = await t.alpha.create("stale-1");
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    await runner.send([{ type: "approval.requested", data: { requestId: "r-stale", tool: "deploy" } }]);
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/stale-1"));
    const card = page.locator("li.approval[data-request-id='r-stale']");
    await card.waitFor();
    // Hold the page's re-reads of the run, so it still shows the request another operator decides.
    const held: (() => Promise<void>)[] = [];
    await page.route(
      (url) => url.pathname === "/v1/runs/stale-1",
      (route) => {
        held.push(() => route.continue());
      },
    );
    await t.alpha.ok("POST", "/v1/runs/stale-1/approvals/r-stale", { decision: "deny", reason: "not today" });
    await card.getByRole("button", { name: "Approve" }).click();
    await expect(card.locator(".notice").textContent()).resolves.toContain("This approval is no longer pending");
    await page.unroute((url) => url.pathname === "/v1/runs/stale-1");
    for (const release of held.splice(0)) await release();
    await card.waitFor({ state: "detached" });
    await expect(page.locator("section[aria-label=Approvals] .notice").textContent()).resolves.toContain(
      "no longer pending",
    );
    expect(runner.commands.map((command) => command.decision)).toEqual(["deny"]);
  });
});

describe("run page, large approval requests", () => {
  it("a request too large for the run record is fetched from its own route and shown on its card", async () => {
    const created = await t.alpha.create("steer-large");
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    const patch = `--- a/app.ts\n+++ b/app.ts\n${"+ added line\n".repeat(1500)}`;
    await runner.send([{ type: "approval.requested", data: { requestId: "patch-1", tool: "apply_patch", patch } }]);
    expect((await t.alpha.ok("GET", "/v1/runs/steer-large")).pendingApprovals).toMatchObject([
      { requestId: "patch-1", truncated: true, data: null },
    ]);
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/steer-large"));
    const card = page.locator("li.approval[data-request-id='patch-1']");
    await card.locator("dd", { hasText: "apply_patch" }).waitFor();
    await expect(card.locator("dd", { hasText: "--- a/app.ts" }).textContent()).resolves.toContain("+ added line");
  });
});

describe("share links", () => {
  it("a read-only share link shows the run and no controls; the server refuses its writes", async () => {
    const { page: operator } = await t.browser.open({ apiKey: ALPHA });
    await operator.goto(t.url("/runs/steer-1"));
    await operator.getByRole("button", { name: "Share" }).click();
    const link = await operator.locator("#share-link").inputValue();
    expect(link).toMatch(/\/runs\/steer-1#token=rt1\./);

    const { page: viewer } = await t.browser.open();
    await viewer.goto(link.replace(/^http:\/\/[^/]+/, t.url("")));
    await viewer.locator("[data-live='ended']").waitFor();
    const stored = await t.alpha.events("steer-1");
    expect(await renderedSeqs(viewer)).toEqual(stored.map((event) => event.seq));
    await expect(viewer.locator(".session-chip").textContent()).resolves.toBe("Share link · read-only");
    expect(await viewer.locator("#command-input").count()).toBe(0);
    expect(await viewer.getByRole("button", { name: /Approve|Deny|Interrupt|Cancel run|Share/ }).count()).toBe(0);
    await expect(viewer.locator(".controls").textContent()).resolves.toContain("This link is read-only");

    const token = decodeURIComponent(link.split("#token=")[1] ?? "");
    const refused = await t.alpha.request(
      "POST",
      "/v1/runs/steer-1/commands",
      { commandId: "x", type: "interrupt" },
      token,
    );
    expect(refused.status).toBe(403);
  });

  it("a revoked share link says it was revoked: on a page left open, and on one opened after", async () => {
    t.expectRefusals(401);
    const created = await t.alpha.create("revoked-link");
    const { token, tokenId } = await t.alpha.ok("POST", "/v1/runs/revoked-link/tokens", { role: "viewer" });
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    const { page: open } = await t.browser.open();
    await open.goto(t.url(`/runs/revoked-link#token=${token}`));
    await open.locator("[data-live='live']").waitFor();

    await t.alpha.ok("DELETE", `/v1/runs/revoked-link/tokens/${tokenId}`);
    const shown = open.locator("[data-problem='401']");
    await expect(shown.locator("h1").textContent()).resolves.toBe("This share link was revoked");

    const { page: later } = await t.browser.open();
    await later.goto(t.url(`/runs/revoked-link#token=${token}`));
    await expect(later.locator("[data-problem='401'] h1").textContent()).resolves.toBe("This share link was revoked");
    expect(await later.locator("[data-problem='401'] p").textContent()).toContain("Ask its owner for a new link");
  });

  it("an interacting share link (as `npm run demo` prints) shows the controls, without Share", async () => {
    const created = await t.alpha.create("demo-like");
    const { token } = await t.alpha.ok("POST", "/v1/runs/demo-like/tokens", { role: "viewer", interact: true });
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    const { page } = await t.browser.open();
    await page.goto(t.url(`/runs/demo-like#token=${token}`));
    await page.locator("[data-live='live']").waitFor();
    await expect(page.locator(".session-chip").textContent()).resolves.toBe("Share link · can steer");
    expect(await page.getByRole("button", { name: "Share" }).count()).toBe(0);
    await page.getByLabel("Send input to the agent").fill("hello from a share link");
    await page.getByRole("button", { name: "Send", exact: true }).click();
    await waitFor("the runner to receive the input", () => runner.commands.length === 1);
    expect(runner.commands[0]?.text).toBe("hello from a share link");
  });
});
