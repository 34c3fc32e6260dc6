import { describe, expect, test } from "vitest";
import type { RunnerOutcome } from "../../src/protocol/index.ts";
import { FIXTURES } from "../bridge/harness/bridge.ts";
import * as sessions from "../support/agent-sessions.ts";
import { expectExit, lines, startCli } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";
import type { AgentEvent } from "./harness/runner.ts";
import { maskTimes, render } from "./harness/session.ts";

/**
 * `agent-run watch` on codex, claude-code and AG-UI ndjson runs as the adapters journal them
 * (their mappers fed what the agents printed; the same sessions the console tests render): it
 * prints exactly what the stored log renders, and that reads as the conversation written below.
 */
const edge = useEdge();

/** A run fed these events, approvals approved as an operator would; the lines `watch` printed. */
async function watched(
  runId: string,
  agent: string,
  events: AgentEvent[],
  outcome: RunnerOutcome,
  exit: number,
): Promise<string[]> {
  const { run, runner } = await edge.claimedRun({ runId, agent: { name: agent } });
  const watch = startCli(edge.url, ["watch", run.id]);
  let sent = 0;
  for (const [i, event] of events.entries()) {
    if (event.type !== "approval.requested") continue;
    const requestId = (event.data as { requestId: string }).requestId;
    await runner.emit(events.slice(sent, i + 1));
    sent = i + 1;
    await watch.waitForStdout(`approval ${requestId}`, (out) => out.includes(`approval ${requestId} requested`));
    const approved = await edge.api.request("POST", `/v1/runs/${runId}/approvals/${requestId}`, {
      decision: "approve",
    });
    expect(approved.status).toBe(201);
    await runner.ack(await runner.command(), "applied");
    await edge.api.waitForStatus(runId, "running");
  }
  await runner.emit(events.slice(sent));
  await runner.complete(outcome);
  await expectExit(watch, exit);
  expect(watch.stdout()).toBe(render(run.id, await edge.api.events(run.id)));
  expect(watch.stderr()).toBe("");
  return maskTimes(lines(watch.stdout()));
}

/** A RAW line: the agent's own message, compact, starting as given. */
const raw = (source: string, start: string) =>
  expect.stringMatching(new RegExp(`^HH:MM:SS raw ${source}: ${start.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
const approval = (runId: string, requestId: string, asked: string) => [
  `HH:MM:SS approval ${requestId} requested · ${asked}`,
  `         agent-run approve ${runId} ${requestId}  (or deny)`,
  `HH:MM:SS approval ${requestId} approved`,
  `HH:MM:SS → approve ${requestId}`,
  `HH:MM:SS   approve ${requestId}: applied`,
];
const start = (runId: string, agent: string) => [
  `HH:MM:SS run ${runId} created · agent ${agent}`,
  "HH:MM:SS claimed by test-runner · epoch 1",
];

describe("watch renders agent sessions as conversations", () => {
  test("the recorded real codex session: raw handshake lines, the session, the user's message, the cancelled turn", async () => {
    const out = await watched("w-codex-real", "codex", sessions.recordedCodex(), { status: "cancelled" }, 2);
    const reconnecting = (n: number) =>
      raw("codex", `{"method":"error","params":{"error":{"message":"Reconnecting... ${n}/5"`);
    expect(out).toEqual([
      ...start("w-codex-real", "codex"),
      raw("codex", '{"id":"rb-initialize","result":{"userAgent":"runner_bridge/0.171.0'),
      raw("codex", '{"method":"configWarning","params":{"summary":"Codex could not find bubblewrap'),
      raw("codex", '{"method":"remoteControl/status/changed"'),
      "HH:MM:SS session codex 01a22dd7-0bfe-7e62-9d58-04c95238b2a5",
      raw("codex", '{"method":"thread/started"'),
      raw("codex", '{"id":"rb-turn-prompt"'),
      raw("codex", '{"method":"thread/status/changed"'),
      "HH:MM:SS turn started",
      "HH:MM:SS user: say hi",
      raw("codex", '{"method":"item/completed","params":{"item":{"type":"userMessage"'),
      reconnecting(2),
      reconnecting(3),
      reconnecting(4),
      reconnecting(5),
      raw("codex", '{"id":"rb-stop-1","result":{}}'),
      raw("codex", '{"method":"thread/status/changed"'),
      "HH:MM:SS turn finished · cancelled",
      "HH:MM:SS run finished · cancelled",
    ]);
  });

  test("the recorded real claude session: the session, claude's message, the failed turn", async () => {
    const message = "Not logged in · Please run /login";
    const failed = { status: "failed", exitCode: 1, error: { code: "agent_exit", message } } as const;
    const out = await watched("w-claude-real", "claude-code", sessions.recordedClaude(), failed, 1);
    expect(out).toEqual([
      ...start("w-claude-real", "claude-code"),
      raw("claude-code", '{"type":"control_response","response":{"subtype":"success"'),
      "HH:MM:SS session claude-code 7d132fc7-77d9-4d33-83fc-0f8fdd5ff0cf",
      `HH:MM:SS assistant: ${message}`,
      `HH:MM:SS agent error: ${message} (claude_api_error)`,
      `HH:MM:SS run finished · failed · exit 1 · agent_exit: ${message}`,
    ]);
  });

  test("the fixture agents' approval turns: the tool call, its approval, its result named, the answer", async () => {
    const done = { status: "succeeded", exitCode: 0 } as const;
    const codex = await watched("w-codex-fixture", "codex", await sessions.fixtureCodex(), done, 0);
    expect(codex).toEqual([
      ...start("w-codex-fixture", "codex"),
      raw("codex", '{"id":"rb-initialize"'),
      "HH:MM:SS session codex thr_1",
      raw("codex", '{"method":"thread/started"'),
      raw("codex", '{"id":"rb-turn-prompt"'),
      "HH:MM:SS turn started",
      "HH:MM:SS user: clean up, needs approval",
      raw("codex", '{"method":"item/completed"'),
      `HH:MM:SS tool commandExecution ${JSON.stringify({ command: "rm -rf build", cwd: FIXTURES })}`,
      ...approval("w-codex-fixture", "codex-0", "commandExecution rm -rf build (deletes files)"),
      "HH:MM:SS   ↳ commandExecution: removed build/",
      "HH:MM:SS assistant: Removed the build directory.",
      "HH:MM:SS turn finished",
      "HH:MM:SS run finished · succeeded · exit 0",
    ]);

    const claude = await watched("w-claude-fixture", "claude-code", await sessions.fixtureClaude(), done, 0);
    const input = JSON.stringify({ command: "rm -rf build", description: "Remove build output" });
    expect(claude).toEqual([
      ...start("w-claude-fixture", "claude-code"),
      raw("claude-code", '{"type":"control_response"'),
      "HH:MM:SS session claude-code sess-fixture",
      `HH:MM:SS tool Bash ${input}`,
      ...approval("w-claude-fixture", "perm-1", `Bash ${input}`),
      "HH:MM:SS   ↳ Bash: ran: rm -rf build",
      "HH:MM:SS assistant: Build directory removed.",
      "HH:MM:SS turn finished · Build directory removed.",
      "HH:MM:SS run finished · succeeded · exit 0",
    ]);
  });

  test("a codex turn with reasoning, a command and a file change behind an approval", async () => {
    const events = [...sessions.codexTurnBeforeApproval(), ...sessions.codexTurnAfterApproval()];
    const out = await watched("w-codex-turn", "codex", events, { status: "succeeded", exitCode: 0 }, 0);
    const patch = (out.find((line) => line.includes("tool fileChange")) ?? "").slice("HH:MM:SS ".length);
    expect(out).toEqual([
      ...start("w-codex-turn", "codex"),
      "HH:MM:SS session codex 019a4c1e-5b7d-7f30-9a41-3c2d8e6f1b20",
      "HH:MM:SS turn started",
      "HH:MM:SS user: The price rounding test fails; fix it.",
      `HH:MM:SS tool commandExecution ${JSON.stringify({ command: "npm test -- --run src/round.test.ts", cwd: "/work/shop" })}`,
      raw("codex", '{"method":"item/commandExecution/outputDelta"'),
      "HH:MM:SS   ↳ commandExecution: FAIL src/round.test.ts (+2 lines)",
      "HH:MM:SS thinking: The test expects 2.35 but round() drops the cents.",
      "         Round to two places in src/round.ts.",
      `HH:MM:SS ${patch}`,
      ...approval("w-codex-turn", "codex-0", "fileChange (edits src/round.ts)"),
      'HH:MM:SS   ↳ fileChange: {"status":"completed"}',
      "HH:MM:SS assistant: Fixed: round() keeps the cents now, and the test passes.",
      "HH:MM:SS turn finished",
      "HH:MM:SS run finished · succeeded · exit 0",
    ]);
    expect(patch).toMatch(/^tool fileChange \{"changes":\[\{"path":"src\/round.ts",/);
  });

  test("a streamed claude turn, an interrupted one, and an ndjson agent speaking AG-UI in chunks", async () => {
    const done = { status: "succeeded", exitCode: 0 } as const;
    const streamed = await watched("w-claude-stream", "claude-code", sessions.claudeStreamedTurn(), done, 0);
    expect(streamed).toEqual([
      ...start("w-claude-stream", "claude-code"),
      "HH:MM:SS session claude-code 5f0c9a7e-2b1d-4e8f-9c3a-7d6e5b4a3c21",
      "HH:MM:SS user: list the files",
      raw("claude-code", '{"type":"stream_event","event":{"type":"message_start"'),
      "HH:MM:SS thinking: ls is enough here.",
      "HH:MM:SS assistant: Listing them.",
      'HH:MM:SS tool Bash {"command":"ls"}',
      raw("claude-code", '{"type":"stream_event","event":{"type":"message_stop"}'),
      raw("claude-code", '{"type":"assistant"'),
      "HH:MM:SS   ↳ Bash: a.ts (+1 lines)",
      "HH:MM:SS turn finished · Listing them.",
      "HH:MM:SS run finished · succeeded · exit 0",
    ]);

    const cut = await watched(
      "w-claude-cut",
      "claude-code",
      sessions.claudeInterruptedTurn(),
      { status: "cancelled" },
      2,
    );
    expect(cut.slice(3)).toEqual([
      raw("claude-code", '{"type":"stream_event","event":{"type":"message_start"'),
      "HH:MM:SS assistant: Deleting the",
      "HH:MM:SS tool Bash (unfinished)",
      "HH:MM:SS agent error: Interrupted. (claude_error_during_execution)",
      "HH:MM:SS run finished · cancelled",
    ]);

    const ndjson = await watched("w-ndjson", "my-agent", sessions.ndjsonAgUiTurn(), done, 0);
    expect(ndjson).toEqual([
      ...start("w-ndjson", "my-agent"),
      "HH:MM:SS session my-agent conv-42",
      "HH:MM:SS turn started",
      "HH:MM:SS assistant: Checking the logs.",
      "HH:MM:SS thinking: The error is in the last hour.",
      'HH:MM:SS tool grep {"pattern":"ERROR","path":"app.log"}',
      "HH:MM:SS   ↳ app.log:812: ERROR disk full",
      'HH:MM:SS progress {"done":1}',
      "HH:MM:SS assistant: plain output line",
      "HH:MM:SS turn finished",
      "HH:MM:SS run finished · succeeded · exit 0",
    ]);
  });
});
