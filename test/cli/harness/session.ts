/** A scripted AG-UI session for a test runner to send, and the transcript `watch` should print for it. */
import type { RunEvent } from "../../../src/protocol/index.ts";
import { NO_COLORS } from "../../../agent-run/src/format.ts";
import { Transcript } from "../../../agent-run/src/transcript.ts";
import type { AgentEvent } from "./runner.ts";

/** Up to and including the approval request. */
export function beforeApproval(runId: string): AgentEvent[] {
  return [
    { type: "RUN_STARTED", data: { threadId: "t-1", runId } },
    { type: "TEXT_MESSAGE_START", data: { messageId: "m-1", role: "assistant" } },
    { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m-1", delta: "Looking at " } },
    { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m-1", delta: "the failing " } },
    { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m-1", delta: "test.\nIt needs a fix.\n" } },
    { type: "TEXT_MESSAGE_END", data: { messageId: "m-1" } },
    { type: "REASONING_START", data: { messageId: "r-1" } },
    { type: "REASONING_MESSAGE_START", data: { messageId: "r-1", role: "reasoning" } },
    { type: "REASONING_MESSAGE_CONTENT", data: { messageId: "r-1", delta: "weighing " } },
    { type: "REASONING_MESSAGE_CONTENT", data: { messageId: "r-1", delta: "two options" } },
    { type: "REASONING_MESSAGE_END", data: { messageId: "r-1" } },
    { type: "REASONING_END", data: { messageId: "r-1" } },
    { type: "TOOL_CALL_START", data: { toolCallId: "c-1", toolCallName: "search", parentMessageId: "m-1" } },
    { type: "TOOL_CALL_ARGS", data: { toolCallId: "c-1", delta: '{"q":' } },
    { type: "TOOL_CALL_ARGS", data: { toolCallId: "c-1", delta: '"flaky tests"}' } },
    { type: "TOOL_CALL_END", data: { toolCallId: "c-1" } },
    {
      type: "TOOL_CALL_RESULT",
      data: { messageId: "x-1", toolCallId: "c-1", role: "tool", content: "3 results\nA\nB" },
    },
    { type: "CUSTOM", data: { name: "progress", value: { pct: 50 } } },
    { type: "RAW", data: { source: "codex", event: { anything: 1 } } },
    { type: "weird.thing", data: { x: 1 } },
    { type: "approval.requested", data: { requestId: "r-1", toolName: "shell", input: { cmd: "npm test" } } },
  ];
}

export function afterApproval(runId: string): AgentEvent[] {
  return [
    { type: "TEXT_MESSAGE_START", data: { messageId: "m-2", role: "assistant" } },
    { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m-2", delta: "Done." } },
    { type: "TEXT_MESSAGE_END", data: { messageId: "m-2" } },
    { type: "RUN_FINISHED", data: { threadId: "t-1", runId } },
  ];
}

/** What `watch` prints for the whole session (approved with reason "ok"), times as HH:MM:SS. */
export function expectedTranscript(runId: string): string[] {
  return [
    `HH:MM:SS run ${runId} created · agent test-agent`,
    "HH:MM:SS claimed by test-runner · epoch 1",
    "HH:MM:SS turn started",
    "HH:MM:SS assistant: Looking at the failing test.",
    "         It needs a fix.",
    "HH:MM:SS thinking: weighing two options",
    'HH:MM:SS tool search {"q":"flaky tests"}',
    "HH:MM:SS   ↳ 3 results (+2 lines)",
    'HH:MM:SS progress {"pct":50}',
    'HH:MM:SS raw codex: {"anything":1}',
    'HH:MM:SS {"type":"weird.thing","data":{"x":1}}',
    'HH:MM:SS approval r-1 requested · shell {"cmd":"npm test"}',
    `         agent-run approve ${runId} r-1  (or deny)`,
    "HH:MM:SS approval r-1 approved · ok",
    "HH:MM:SS → approve r-1 (ok)",
    "HH:MM:SS   approve r-1 (ok): applied",
    "HH:MM:SS assistant: Done.",
    "HH:MM:SS turn finished",
    "HH:MM:SS run finished · succeeded · exit 0",
  ];
}

export const maskTimes = (lines: string[]) => lines.map((l) => l.replace(/^\d\d:\d\d:\d\d /, "HH:MM:SS "));

/** The stored log as `watch` renders it without a terminal. */
export function render(runId: string, events: RunEvent[]): string {
  const transcript = new Transcript(runId, NO_COLORS);
  return events.map((e) => transcript.render(e)).join("") + transcript.close();
}
