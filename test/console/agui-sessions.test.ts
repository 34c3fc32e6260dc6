import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { FIXTURES } from "../bridge/harness/bridge.ts";
import * as sessions from "../support/agent-sessions.ts";
import type { AgentEvent, TestRunner } from "../support/runner-client.ts";
import { waitFor } from "../support/wait.ts";
import { DESKTOP, PHONE, screenshot } from "./browser.ts";
import { ALPHA, useConsole } from "./harness.ts";
import { comparable, expectedRows, readRows, renderedRows, showsLog } from "./transcript.ts";

/**
 * Codex, claude-code and AG-UI ndjson runs as the adapters journal them (their mappers fed what
 * the agents printed), streamed live to an open run page: the page renders the stored log row for
 * row, and each session reads as the conversation written out below.
 */
const t = useConsole();

async function openRun(runId: string, agent: string): Promise<{ page: Page; runner: TestRunner }> {
  const created = await t.alpha.create(runId, { agent: { name: agent }, input: { prompt: "…" } });
  const { page } = await t.browser.open({ apiKey: ALPHA });
  await page.goto(t.url(`/runs/${runId}`));
  await page.locator("[data-live='live']").waitFor();
  const runner = await t.alpha.runner(created);
  t.runners.push(runner);
  return { page, runner };
}

/** Sends events and waits until the page renders exactly what the stored log gives. */
async function stream(page: Page, runner: TestRunner, runId: string, events: AgentEvent[]): Promise<RunEvent[]> {
  await runner.send(events);
  const stored = await t.alpha.events(runId);
  await waitFor(
    `the page to render events 1..${stored.length} of ${runId} as stored`,
    () => showsLog(page, stored),
    15_000,
  );
  return stored;
}

/** Up to and including the approval request, the operator's approval through the API, then the rest. */
async function streamApproving(page: Page, runner: TestRunner, runId: string, events: AgentEvent[]) {
  const at = events.findIndex((event) => event.type === "approval.requested");
  const requestId = (events[at]?.data as { requestId?: string } | undefined)?.requestId;
  if (requestId === undefined) throw new Error("the session asks for no approval");
  await stream(page, runner, runId, events.slice(0, at + 1));
  await t.alpha.ok("POST", `/v1/runs/${runId}/approvals/${requestId}`, { decision: "approve" });
  await waitFor(`the runner to receive the approval of ${requestId}`, () => runner.commands.length === 1);
  return stream(page, runner, runId, events.slice(at + 1));
}

async function finish(page: Page, runner: TestRunner, runId: string, outcome: Parameters<TestRunner["complete"]>[0]) {
  await runner.complete(outcome);
  await page.locator("[data-live='ended']").waitFor();
  const stored = await t.alpha.events(runId);
  await waitFor(`the page to render the whole log of ${runId}`, () => showsLog(page, stored), 15_000);
  expect(comparable(await renderedRows(page))).toEqual(comparable(expectedRows(stored)));
}

const created = (agent: string) => ({ kind: "control", text: "", label: `Run created for ${agent} …` });
const claimed = { kind: "control", text: "", label: "Claimed by console-test-runner · epoch 1" };
const raw = (label: string) => ({ kind: "raw", text: "", label: `RAW ${label}` });
const timeline = (kind: string, label: string) => ({ kind, text: "", label });

describe("agent sessions as conversations", () => {
  it("a codex turn: reasoning folded, a command card with its result, a file change linked to its approval", async () => {
    const { page, runner } = await openRun("codex-turn", "codex");
    await stream(page, runner, "codex-turn", sessions.codexTurnBeforeApproval());
    const pinned = page.locator("li.approval[data-request-id='codex-0']");
    await pinned.waitFor();
    const commandCard = {
      kind: "tool",
      text: JSON.stringify({ command: "npm test -- --run src/round.test.ts", cwd: "/work/shop" }),
      label: "commandExecution npm test -- --run src/round.test.ts · result",
      result: "↳ FAIL src/round.test.ts (+2 lines)",
    };
    const patchArgs = JSON.stringify({
      changes: [
        {
          path: "src/round.ts",
          kind: { type: "update", move_path: null },
          diff: "-  return Math.round(x);\n+  return Math.round(x * 100) / 100;",
        },
      ],
    });
    const beforeApproval = [
      created("codex"),
      claimed,
      timeline("session", "Session codex 019a4c1e-5b7d-7f30-9a41-3c2d8e6f1b20"),
      timeline("lifecycle", "Turn started 019a4c1e-5c02-7b11-8e6a-0f4d2c9a7e55"),
      { kind: "message", text: "The price rounding test fails; fix it.", label: "user" },
      commandCard,
      raw("codex item/commandExecution/outputDelta"),
      {
        kind: "reasoning",
        text: "The test expects 2.35 but round() drops the cents.\n\nRound to two places in src/round.ts.",
        label: "Reasoning",
      },
      {
        kind: "tool",
        text: patchArgs,
        label: "fileChange src/round.ts · awaiting approval",
        approval: "Approval codex-0 · pending",
      },
      timeline("control", "Approval requested · codex-0 (edits src/round.ts) for fileChange"),
    ];
    expect(await readRows(page)).toEqual(beforeApproval);
    // Reasoning is folded to a dimmed line once it is done; the command card shows what it ran.
    await expect(page.locator("li.kind-reasoning details").getAttribute("open")).resolves.toBeNull();
    await expect(page.locator("li.kind-reasoning .reasoning-preview").textContent()).resolves.toBe(
      "The test expects 2.35 but round() drops the cents. Round to two places in src/round.ts.",
    );
    await expect(page.locator("li.kind-tool .tool-headline").allTextContents()).resolves.toEqual([
      "npm test -- --run src/round.test.ts",
      "src/round.ts",
    ]);
    await page.setViewportSize(PHONE);
    await screenshot(page, "run-phone", { fullPage: true });
    await page.setViewportSize(DESKTOP);

    // The card and the request link to each other; following a link highlights the other row.
    const stored = await t.alpha.events("codex-turn");
    const requestSeq = stored.find((event) => event.type === "approval.requested")?.seq;
    const patchSeq = stored.find((event) => (event.data as { toolCallId?: string }).toolCallId === "call_patch_1")?.seq;
    await page.getByRole("link", { name: `Approval request codex-0, event ${requestSeq}` }).click();
    await waitFor("the approval row to be the target", () => page.url().endsWith(`#seq=${requestSeq}`));
    await expect(page.locator("li.row.is-target").getAttribute("data-seqs")).resolves.toBe(String(requestSeq));
    await page.getByRole("link", { name: `Tool call fileChange, event ${patchSeq}` }).click();
    await waitFor("the tool card to be the target", () => page.url().endsWith(`#seq=${patchSeq}`));
    await expect(page.locator("li.row.is-target").getAttribute("data-kind")).resolves.toBe("tool");

    await pinned.getByRole("button", { name: "Approve" }).click();
    await waitFor("the runner to receive the approval", () => runner.commands.length === 1);
    await stream(page, runner, "codex-turn", sessions.codexTurnAfterApproval());
    expect(await readRows(page)).toEqual([
      ...beforeApproval.slice(0, 8),
      {
        kind: "tool",
        text: patchArgs,
        label: "fileChange src/round.ts · result",
        result: '↳ {"status":"completed"}',
        approval: "Approval codex-0 · approved",
      },
      beforeApproval[9],
      timeline("control", "Approval approved · codex-0"),
      timeline("control", "Approval sent to the runner request codex-0"),
      timeline("control", "Decision on codex-0 applied by the runner"),
      { kind: "message", text: "Fixed: round() keeps the cents now, and the test passes.", label: "assistant" },
      timeline("lifecycle", "Turn finished"),
    ]);
    // The screenshot: the conversation as it reads once approved, nothing highlighted.
    await page.getByRole("button", { name: "Dismiss" }).click();
    await page.evaluate('location.hash = ""');
    await page.locator("li.row.is-target").waitFor({ state: "detached" });
    await page.locator(".transcript-scroll").evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await waitFor("the transcript to follow the latest row", async () => (await page.locator(".jump").count()) === 0);
    await screenshot(page, "run-desktop");
    await finish(page, runner, "codex-turn", { status: "succeeded", exitCode: 0 });
  });

  it("the recorded real codex session: handshake as raw rows, the session, the turn, its cancel", async () => {
    const { page, runner } = await openRun("codex-real", "codex");
    await stream(page, runner, "codex-real", sessions.recordedCodex());
    await t.alpha.ok("POST", "/v1/runs/codex-real/cancel", { reason: "no network" });
    await waitFor("the runner to receive the cancel", () => runner.commands.length === 1);
    await finish(page, runner, "codex-real", {
      status: "cancelled",
      error: { code: "cancelled", message: "no network" },
    });
    const warning =
      "Codex could not find bubblewrap on PATH. Install bubblewrap with your OS package manager. See the sandbox prerequisites…";
    expect(await readRows(page)).toEqual([
      created("codex"),
      claimed,
      raw("codex response rb-initialize"),
      raw(`codex configWarning · ${warning}`),
      raw("codex remoteControl/status/changed"),
      timeline("session", "Session codex 01a22dd7-0bfe-7e62-9d58-04c95238b2a5"),
      raw("codex thread/started"),
      raw("codex response rb-turn-prompt"),
      raw("codex thread/status/changed"),
      timeline("lifecycle", "Turn started 01a22dd7-0c68-74b0-b3c7-bf7fcc2c6597"),
      { kind: "message", text: "say hi", label: "user" },
      raw("codex item/completed"),
      raw("codex error · Reconnecting... 2/5"),
      raw("codex error · Reconnecting... 3/5"),
      raw("codex error · Reconnecting... 4/5"),
      raw("codex error · Reconnecting... 5/5"),
      raw("codex response rb-stop-1"),
      raw("codex thread/status/changed"),
      timeline("lifecycle", "Turn cancelled"),
      timeline("control", "Cancel command queued no network"),
      timeline("control", "Cancel applied by the runner"),
      timeline("control", "Run finished · Cancelled cancelled: no network"),
    ]);
  });

  it("the recorded real claude session: the session, claude's message, the failed turn", async () => {
    const { page, runner } = await openRun("claude-real", "claude-code");
    await stream(page, runner, "claude-real", sessions.recordedClaude());
    const message = "Not logged in · Please run /login";
    await finish(page, runner, "claude-real", {
      status: "failed",
      exitCode: 1,
      error: { code: "agent_exit", message },
    });
    expect(await readRows(page)).toEqual([
      created("claude-code"),
      claimed,
      raw("claude-code control_response · success"),
      timeline("session", "Session claude-code 7d132fc7-77d9-4d33-83fc-0f8fdd5ff0cf"),
      { kind: "message", text: message, label: "assistant" },
      timeline("error", `${message} claude_api_error RUN_ERROR`),
      timeline("control", `Run finished · Failed agent_exit: ${message}`),
    ]);
  });

  it("the fixture agents' approval turns: one tool card each, approved, with its result", async () => {
    const approved = (requestId: string, tool: string, asked: string) => [
      timeline("control", `Approval requested · ${requestId} ${asked} for ${tool}`),
      timeline("control", `Approval approved · ${requestId}`),
      timeline("control", `Approval sent to the runner request ${requestId}`),
      timeline("control", `Decision on ${requestId} applied by the runner`),
    ];
    const codex = await openRun("codex-fixture", "codex");
    await streamApproving(codex.page, codex.runner, "codex-fixture", await sessions.fixtureCodex());
    expect(await readRows(codex.page)).toEqual([
      created("codex"),
      claimed,
      raw("codex response rb-initialize"),
      timeline("session", "Session codex thr_1"),
      raw("codex thread/started"),
      raw("codex response rb-turn-prompt"),
      timeline("lifecycle", "Turn started turn_1"),
      { kind: "message", text: "clean up, needs approval", label: "user" },
      raw("codex item/completed"),
      {
        kind: "tool",
        // the fixture runs where the tests keep it
        text: JSON.stringify({ command: "rm -rf build", cwd: FIXTURES }),
        label: "commandExecution rm -rf build · result",
        result: "↳ removed build/",
        approval: "Approval codex-0 · approved",
      },
      ...approved("codex-0", "commandExecution", "rm -rf build (deletes files)"),
      { kind: "message", text: "Removed the build directory.", label: "assistant" },
      timeline("lifecycle", "Turn finished"),
    ]);

    const claude = await openRun("claude-fixture", "claude-code");
    await streamApproving(claude.page, claude.runner, "claude-fixture", await sessions.fixtureClaude());
    expect(await readRows(claude.page)).toEqual([
      created("claude-code"),
      claimed,
      raw("claude-code control_response · success"),
      timeline("session", "Session claude-code sess-fixture"),
      {
        kind: "tool",
        text: JSON.stringify({ command: "rm -rf build", description: "Remove build output" }),
        label: "Bash rm -rf build · result",
        result: "↳ ran: rm -rf build",
        approval: "Approval perm-1 · approved",
      },
      ...approved("perm-1", "Bash", 'Bash {"command":"rm -rf build","description":"Remove build output"}'),
      { kind: "message", text: "Build directory removed.", label: "assistant" },
      timeline("lifecycle", "Turn finished Build directory removed."),
    ]);
    await finish(codex.page, codex.runner, "codex-fixture", { status: "succeeded", exitCode: 0 });
    await finish(claude.page, claude.runner, "claude-fixture", { status: "succeeded", exitCode: 0 });
  });

  it("a streamed claude turn grows in place: streaming labels while it streams, one row per block", async () => {
    const { page, runner } = await openRun("claude-stream", "claude-code");
    const events = sessions.claudeStreamedTurn();
    const cut = (type: string, delta: string) =>
      events.findIndex((event) => event.type === type && (event.data as { delta?: string }).delta === delta) + 1;
    const midText = cut("TEXT_MESSAGE_CONTENT", "Listing ");
    const midArgs = cut("TOOL_CALL_ARGS", '{"command":');
    await stream(page, runner, "claude-stream", events.slice(0, midText));
    expect((await readRows(page)).slice(5)).toEqual([
      { kind: "reasoning", text: "ls is enough here.", label: "Reasoning" },
      { kind: "message", text: "Listing ", label: "assistant · streaming" },
    ]);
    await expect(page.locator("li.kind-message .streaming").count()).resolves.toBe(1);
    await stream(page, runner, "claude-stream", events.slice(midText, midArgs));
    expect((await readRows(page)).slice(6)).toEqual([
      { kind: "message", text: "Listing them.", label: "assistant" },
      { kind: "tool", text: '{"command":', label: "Bash · streaming arguments" },
    ]);
    await stream(page, runner, "claude-stream", events.slice(midArgs));
    await finish(page, runner, "claude-stream", { status: "succeeded", exitCode: 0 });
    expect(await readRows(page)).toEqual([
      created("claude-code"),
      claimed,
      timeline("session", "Session claude-code 5f0c9a7e-2b1d-4e8f-9c3a-7d6e5b4a3c21"),
      { kind: "message", text: "list the files", label: "user" },
      raw("claude-code stream_event · message_start"),
      { kind: "reasoning", text: "ls is enough here.", label: "Reasoning" },
      { kind: "message", text: "Listing them.", label: "assistant" },
      { kind: "tool", text: JSON.stringify({ command: "ls" }), label: "Bash ls · result", result: "↳ a.ts (+1 lines)" },
      raw("claude-code stream_event · message_stop"),
      raw("claude-code assistant"),
      timeline("lifecycle", "Turn finished Listing them."),
      timeline("control", "Run finished · Succeeded"),
    ]);
  });

  it("an ndjson agent speaking AG-UI in chunks: session, message, reasoning, tool, its own event, plain text", async () => {
    const { page, runner } = await openRun("ndjson-agui", "my-agent");
    await stream(page, runner, "ndjson-agui", sessions.ndjsonAgUiTurn());
    await finish(page, runner, "ndjson-agui", { status: "succeeded", exitCode: 0 });
    expect(await readRows(page)).toEqual([
      created("my-agent"),
      claimed,
      timeline("session", "Session my-agent conv-42"),
      timeline("lifecycle", "Turn started turn-1"),
      { kind: "message", text: "Checking the logs.", label: "assistant" },
      { kind: "reasoning", text: "The error is in the last hour.", label: "Reasoning" },
      {
        kind: "tool",
        text: JSON.stringify({ pattern: "ERROR", path: "app.log" }),
        label: "grep ERROR · result",
        result: "↳ app.log:812: ERROR disk full",
      },
      { kind: "raw", text: "", label: "CUSTOM progress" },
      { kind: "message", text: "plain output line\n", label: "assistant" },
      timeline("lifecycle", "Turn finished"),
      timeline("control", "Run finished · Succeeded"),
    ]);
  });

  it("a turn that ends mid-stream leaves its message cut off and its tool call without a result", async () => {
    const { page, runner } = await openRun("claude-cut", "claude-code");
    await stream(page, runner, "claude-cut", sessions.claudeInterruptedTurn());
    await finish(page, runner, "claude-cut", { status: "cancelled" });
    expect((await readRows(page)).slice(3)).toEqual([
      raw("claude-code stream_event · message_start"),
      { kind: "message", text: "Deleting the", label: "assistant · cut off" },
      { kind: "tool", text: "", label: "Bash · no result" },
      timeline("error", "Interrupted. claude_error_during_execution RUN_ERROR"),
      timeline("control", "Run finished · Cancelled"),
    ]);
  });
});
