import { claudeEvents } from "../../runner-bridge/src/adapters/agui/claude-events.ts";
import { codexEvents } from "../../runner-bridge/src/adapters/agui/codex-events.ts";
import { ndjsonEvents } from "../../runner-bridge/src/adapters/agui/ndjson-events.ts";
import { recordedLines } from "../bridge/unit/agui-support.ts";
import { claudeFixtureSession, codexFixtureSession } from "../bridge/unit/fixture-sessions.ts";
import { mapLines } from "../bridge/unit/map-lines.ts";
import type { AgentEvent } from "./runner-client.ts";

/**
 * Agent sessions as the AG-UI events a runner sends: what the agents printed (the recorded real
 * CLIs, the fixture agents run for real, and a few native sessions written here for what neither
 * does offline) fed through the adapters' own mappers (runner-bridge/src/adapters/agui), exactly
 * as runner-bridge would journal them.
 */

const mapCodex = (lines: string[]) => mapLines(codexEvents, lines);
const mapClaude = (lines: string[]) => mapLines(claudeEvents, lines);
const lines = (messages: unknown[]) => messages.map((message) => JSON.stringify(message));

/** The real `codex app-server` offline: handshake, a turn that waits for the network, an interrupt. */
export const recordedCodex = (): AgentEvent[] => mapCodex(recordedLines("codex-app-server"));

/** The real `claude -p` offline: its session, "Not logged in", the failed result. */
export const recordedClaude = (): AgentEvent[] => mapClaude(recordedLines("claude-stream-json"));

/** The fixture codex, run for real: a command behind an approval (accepted), its output, the answer. */
export async function fixtureCodex(): Promise<AgentEvent[]> {
  return mapCodex(await codexFixtureSession("clean up, needs approval"));
}

/** The fixture claude, run for real: a Bash tool call behind an approval, its result, the answer. */
export async function fixtureClaude(): Promise<AgentEvent[]> {
  return mapClaude(await claudeFixtureSession("clean up, needs approval"));
}

const THREAD = "019a4c1e-5b7d-7f30-9a41-3c2d8e6f1b20";
const TURN = "019a4c1e-5c02-7b11-8e6a-0f4d2c9a7e55";
const at = (n: number) => 1_796_065_400_000 + n * 350;

function note(n: number, method: string, params: Record<string, unknown>) {
  return { method, params: { threadId: THREAD, turnId: TURN, ...params }, emittedAtMs: at(n) };
}
const command = (status: string, output: string | null, exitCode: number | null) => ({
  type: "commandExecution",
  id: "call_cmd_1",
  command: "npm test -- --run src/round.test.ts",
  cwd: "/work/shop",
  processId: null,
  source: "agent",
  status,
  commandActions: [],
  aggregatedOutput: output,
  exitCode,
  durationMs: status === "inProgress" ? null : 2140,
});
const patch = (status: string) => ({
  type: "fileChange",
  id: "call_patch_1",
  changes: [
    {
      path: "src/round.ts",
      kind: { type: "update", move_path: null },
      diff: "-  return Math.round(x);\n+  return Math.round(x * 100) / 100;",
    },
  ],
  status,
});
const reasoning = (id: string, summary: string[]) => ({ type: "reasoning", id, summary, content: [] });
const said = (id: string, text: string) => ({ type: "agentMessage", id, text, phase: null });

/**
 * A codex turn with what an offline codex cannot show, in the app-server protocol's shapes (as in
 * the fixture and the codex mapper's tests): a command and its output, reasoning about it, then a
 * file change waiting for the operator's approval. Up to the approval request.
 */
export function codexTurnBeforeApproval(): AgentEvent[] {
  const prompt = "The price rounding test fails; fix it.";
  const [expects, drops, plan] = [
    "The test expects 2.35",
    " but round() drops the cents.",
    "Round to two places in src/round.ts.",
  ];
  return mapCodex(
    lines([
      { id: "rb-thread-start", result: { thread: { id: THREAD, cwd: "/work/shop", turns: [] } } },
      note(1, "turn/started", { turn: { id: TURN, items: [], status: "inProgress", error: null } }),
      note(2, "item/started", {
        item: { type: "userMessage", id: "item_user_1", content: [{ type: "text", text: prompt }] },
      }),
      note(3, "item/started", { item: command("inProgress", null, null) }),
      note(4, "item/commandExecution/outputDelta", { itemId: "call_cmd_1", delta: "FAIL src/round.test.ts\n" }),
      note(5, "item/completed", {
        item: command("failed", "FAIL src/round.test.ts\n  expected 2.35, got 2\n1 failed, 41 passed\n", 1),
      }),
      note(6, "item/started", { item: reasoning("rs_1", []) }),
      note(7, "item/reasoning/summaryTextDelta", { itemId: "rs_1", delta: expects, summaryIndex: 0 }),
      note(8, "item/reasoning/summaryTextDelta", { itemId: "rs_1", delta: drops, summaryIndex: 0 }),
      note(9, "item/reasoning/summaryPartAdded", { itemId: "rs_1", summaryIndex: 1 }),
      note(10, "item/reasoning/summaryTextDelta", { itemId: "rs_1", delta: plan, summaryIndex: 1 }),
      note(11, "item/completed", { item: reasoning("rs_1", [`${expects}${drops}`, plan]) }),
      note(12, "item/started", { item: patch("inProgress") }),
      {
        id: 0,
        method: "item/fileChange/requestApproval",
        params: { threadId: THREAD, turnId: TURN, itemId: "call_patch_1", reason: "edits src/round.ts" },
      },
    ]),
  );
}

/** The same turn after the approval: the patch applied, the answer, the turn finished. */
export function codexTurnAfterApproval(): AgentEvent[] {
  const answer = "Fixed: round() keeps the cents now, and the test passes.";
  return mapCodex(
    lines([
      note(20, "item/completed", { item: patch("completed") }),
      note(21, "item/started", { item: said("msg_1", "") }),
      note(22, "item/agentMessage/delta", { itemId: "msg_1", delta: "Fixed: round() keeps the cents now, " }),
      note(23, "item/agentMessage/delta", { itemId: "msg_1", delta: "and the test passes." }),
      note(24, "item/completed", { item: said("msg_1", answer) }),
      note(25, "turn/completed", { turn: { id: TURN, items: [], status: "completed", error: null } }),
    ]),
  );
}

/** A claude turn with `--include-partial-messages`: thinking, text and a tool call streamed. */
export function claudeStreamedTurn(): AgentEvent[] {
  const session = { session_id: "5f0c9a7e-2b1d-4e8f-9c3a-7d6e5b4a3c21", parent_tool_use_id: null };
  const stream = (event: unknown) => ({ type: "stream_event", event, ...session });
  const delta = (index: number, delta: unknown) => stream({ type: "content_block_delta", index, delta });
  return mapClaude(
    lines([
      { type: "system", subtype: "init", uuid: "init-1", ...session },
      { type: "user", message: { role: "user", content: "list the files" }, uuid: "u1", isReplay: true, ...session },
      stream({ type: "message_start", message: { id: "msg_01", role: "assistant", content: [] } }),
      stream({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }),
      delta(0, { type: "thinking_delta", thinking: "ls is enough " }),
      delta(0, { type: "thinking_delta", thinking: "here." }),
      stream({ type: "content_block_stop", index: 0 }),
      stream({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
      delta(1, { type: "text_delta", text: "Listing " }),
      delta(1, { type: "text_delta", text: "them." }),
      stream({ type: "content_block_stop", index: 1 }),
      stream({
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "toolu_9", name: "Bash" },
      }),
      delta(2, { type: "input_json_delta", partial_json: '{"command":' }),
      delta(2, { type: "input_json_delta", partial_json: '"ls"}' }),
      stream({ type: "content_block_stop", index: 2 }),
      stream({ type: "message_stop" }),
      {
        type: "assistant",
        message: { id: "msg_01", role: "assistant", content: [{ type: "text", text: "Listing them." }] },
        ...session,
      },
      {
        type: "user",
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_9", content: "a.ts\nb.ts" }] },
        ...session,
      },
      { type: "result", subtype: "success", is_error: false, result: "Listing them.", ...session },
    ]),
  );
}

/** What an NDJSON agent speaking AG-UI prints (plus a line of plain text), through the ndjson mapper. */
export function ndjsonAgUiTurn(): AgentEvent[] {
  const map = ndjsonEvents();
  return lines([
    { type: "agent.session", provider: "my-agent", id: "conv-42" },
    { type: "RUN_STARTED", threadId: "conv-42", runId: "turn-1" },
    { type: "TEXT_MESSAGE_CHUNK", messageId: "a1", role: "assistant", delta: "Checking " },
    { type: "TEXT_MESSAGE_CHUNK", messageId: "a1", delta: "the logs." },
    { type: "REASONING_MESSAGE_CHUNK", messageId: "r1", delta: "The error is in the last hour." },
    { type: "TOOL_CALL_CHUNK", toolCallId: "t1", toolCallName: "grep", delta: '{"pattern":"ERROR","path":"app.log"}' },
    { type: "TOOL_CALL_RESULT", messageId: "t1-r", toolCallId: "t1", content: "app.log:812: ERROR disk full" },
    { type: "progress", done: 1 },
  ])
    .concat(["plain output line", JSON.stringify({ type: "RUN_FINISHED", threadId: "conv-42", runId: "turn-1" })])
    .map((line) => map(line));
}

/** A claude turn interrupted mid-stream: a text block and a tool call left open, then the error result. */
export function claudeInterruptedTurn(): AgentEvent[] {
  const session = { session_id: "0c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e", parent_tool_use_id: null };
  const stream = (event: unknown) => ({ type: "stream_event", event, ...session });
  return mapClaude(
    lines([
      { type: "system", subtype: "init", uuid: "init-2", ...session },
      stream({ type: "message_start", message: { id: "msg_02", role: "assistant", content: [] } }),
      stream({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      stream({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Deleting the" } }),
      stream({
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_7", name: "Bash" },
      }),
      { type: "result", subtype: "error_during_execution", is_error: true, result: "Interrupted.", ...session },
    ]),
  );
}
