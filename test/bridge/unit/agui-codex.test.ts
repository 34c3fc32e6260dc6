import { describe, expect, it } from "vitest";
import { codexEvents } from "../../../runner-bridge/src/adapters/agui/codex-events.ts";
import { parseObject } from "../../../runner-bridge/src/adapters/common.ts";
import { FIXTURES } from "../harness/bridge.ts";
import { expectValidEvents, nativeOf, recordedLines, renderWithAgUiClient, toClientStream } from "./agui-support.ts";
import { codexFixtureSession } from "./fixture-sessions.ts";
import { mapLines } from "./map-lines.ts";

const mapAll = (lines: string[]) => mapLines(codexEvents, lines);

describe("codex app-server messages as AG-UI events", () => {
  it("the recorded real session: every message is a valid event, the thread is the session, the turn a run", () => {
    const lines = recordedLines("codex-app-server");
    const events = mapAll(lines);
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual([
      "RAW", // initialize response
      "RAW", // configWarning (no bubblewrap)
      "RAW", // remoteControl/status/changed
      "agent.session", // thread/start response
      "RAW", // thread/started
      "RAW", // turn/start response
      "RAW", // thread/status/changed
      "RUN_STARTED", // turn/started
      "TEXT_MESSAGE_CHUNK", // the user's message (item/started userMessage)
      "RAW", // item/completed userMessage
      "RAW", // error "Reconnecting... 2/5"
      "RAW",
      "RAW",
      "RAW", // error "Reconnecting... 5/5"
      "RAW", // turn/interrupt response
      "RAW", // thread/status/changed
      "RUN_FINISHED", // turn/completed, interrupted
    ]);
    const thread = (JSON.parse(lines[3] as string) as { result: { thread: { id: string } } }).result.thread.id;
    const turn = (JSON.parse(lines[7] as string) as { params: { turn: { id: string } } }).params.turn.id;
    expect(events[3]?.data).toMatchObject({ provider: "codex", id: thread });
    expect(events[7]?.data).toMatchObject({ threadId: thread, runId: turn });
    expect(events[8]?.data).toMatchObject({ role: "user", delta: "say hi" });
    expect(events[16]?.data).toMatchObject({ threadId: thread, runId: turn, outcome: { type: "cancelled" } });
    expect(events[10]?.data).toMatchObject({ source: "codex", event: { method: "error" } });
  });

  it("nothing codex printed is dropped: each event carries its message", () => {
    const lines = recordedLines("codex-app-server");
    expect(mapAll(lines).map(nativeOf)).toEqual(lines.map((line) => JSON.parse(line)));
  });

  it("the fixture's approval turn reads as a conversation: the user's message, a command with its result, the answer", async () => {
    const lines = await codexFixtureSession("clean up, needs approval");
    const events = mapAll(lines);
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual([
      "RAW", // initialize response
      "agent.session",
      "RAW", // thread/started
      "RAW", // turn/start response
      "RUN_STARTED",
      "TEXT_MESSAGE_CHUNK",
      "RAW",
      "TOOL_CALL_CHUNK", // item/started commandExecution
      "approval.requested",
      "TOOL_CALL_RESULT",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED",
    ]);
    expect(events[7]?.data).toMatchObject({
      toolCallId: "turn_1-cmd",
      toolCallName: "commandExecution",
      delta: JSON.stringify({ command: "rm -rf build", cwd: FIXTURES }),
    });
    expect(events[8]?.data).toMatchObject({ requestId: "codex-0", toolCallId: "turn_1-cmd", command: "rm -rf build" });

    const { messages, warnings, errors } = await renderWithAgUiClient(toClientStream(events));
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
    expect(messages).toEqual([
      { id: "turn_1-user", role: "user", content: "clean up, needs approval" },
      {
        id: "turn_1-cmd",
        role: "assistant",
        toolCalls: [
          {
            id: "turn_1-cmd",
            type: "function",
            function: {
              name: "commandExecution",
              arguments: JSON.stringify({ command: "rm -rf build", cwd: FIXTURES }),
            },
          },
        ],
      },
      {
        id: "turn_1-cmd:result",
        role: "tool",
        toolCallId: "turn_1-cmd",
        content: "removed build/\n",
      },
      { id: "turn_1-msg", role: "assistant", content: "Removed the build directory." },
    ]);
  });

  it("an interrupted turn finishes its run cancelled", async () => {
    const events = mapAll(await codexFixtureSession("wait for interrupt"));
    expectValidEvents(events);
    expect(events.at(-1)).toMatchObject({
      type: "RUN_FINISHED",
      data: { runId: "turn_1", outcome: { type: "cancelled" } },
    });
  });
});

describe("codex messages the offline session cannot show, shaped as the app-server protocol documents them", () => {
  const base = { threadId: "thr_1", turnId: "turn_1" };
  const cases: [string, unknown, string, Record<string, unknown>][] = [
    [
      "reasoning starts",
      {
        method: "item/started",
        params: { ...base, item: { type: "reasoning", id: "rs_1", summary: [], content: [] } },
      },
      "REASONING_MESSAGE_START",
      { messageId: "rs_1", role: "reasoning" },
    ],
    [
      "a reasoning summary streams",
      {
        method: "item/reasoning/summaryTextDelta",
        params: { ...base, itemId: "rs_1", delta: "Looking", summaryIndex: 0 },
      },
      "REASONING_MESSAGE_CONTENT",
      { messageId: "rs_1", delta: "Looking" },
    ],
    [
      "a new summary part",
      { method: "item/reasoning/summaryPartAdded", params: { ...base, itemId: "rs_1", summaryIndex: 1 } },
      "REASONING_MESSAGE_CONTENT",
      { messageId: "rs_1", delta: "\n\n" },
    ],
    [
      "raw reasoning streams",
      { method: "item/reasoning/textDelta", params: { ...base, itemId: "rs_1", delta: "…", contentIndex: 0 } },
      "REASONING_MESSAGE_CONTENT",
      { messageId: "rs_1", delta: "…" },
    ],
    [
      "reasoning ends",
      {
        method: "item/completed",
        params: { ...base, item: { type: "reasoning", id: "rs_1", summary: ["Looking"], content: [] } },
      },
      "REASONING_MESSAGE_END",
      { messageId: "rs_1" },
    ],
    [
      "a file change starts",
      {
        method: "item/started",
        params: {
          ...base,
          item: {
            type: "fileChange",
            id: "fc_1",
            changes: [{ path: "a.ts", kind: { type: "add" }, diff: "+x" }],
            status: "inProgress",
          },
        },
      },
      "TOOL_CALL_CHUNK",
      { toolCallId: "fc_1", toolCallName: "fileChange" },
    ],
    [
      "a file change ends",
      {
        method: "item/completed",
        params: { ...base, item: { type: "fileChange", id: "fc_1", changes: [], status: "completed" } },
      },
      "TOOL_CALL_RESULT",
      { toolCallId: "fc_1", content: JSON.stringify({ status: "completed" }) },
    ],
    [
      "an MCP tool call starts",
      {
        method: "item/started",
        params: {
          ...base,
          item: {
            type: "mcpToolCall",
            id: "mcp_1",
            server: "docs",
            tool: "search",
            arguments: { q: "x" },
            status: "inProgress",
          },
        },
      },
      "TOOL_CALL_CHUNK",
      { toolCallId: "mcp_1", toolCallName: "docs.search", delta: JSON.stringify({ q: "x" }) },
    ],
    [
      "an MCP tool call ends",
      {
        method: "item/completed",
        params: {
          ...base,
          item: {
            type: "mcpToolCall",
            id: "mcp_1",
            server: "docs",
            tool: "search",
            status: "completed",
            result: { content: [] },
          },
        },
      },
      "TOOL_CALL_RESULT",
      { toolCallId: "mcp_1", content: JSON.stringify({ content: [] }) },
    ],
    [
      "a command's output streams",
      { method: "item/commandExecution/outputDelta", params: { ...base, itemId: "cmd_1", delta: "ok\n" } },
      "RAW",
      { source: "codex" },
    ],
    [
      "a command with output ends",
      {
        method: "item/completed",
        params: {
          ...base,
          item: {
            type: "commandExecution",
            id: "cmd_1",
            command: "ls",
            aggregatedOutput: "ok\n",
            exitCode: 0,
            status: "completed",
          },
        },
      },
      "TOOL_CALL_RESULT",
      { toolCallId: "cmd_1", content: "ok\n" },
    ],
    [
      "a file-change approval",
      { id: 7, method: "item/fileChange/requestApproval", params: { ...base, itemId: "fc_1", reason: "writes" } },
      "approval.requested",
      { requestId: "codex-7", toolCallId: "fc_1", method: "item/fileChange/requestApproval" },
    ],
    [
      "another server request",
      { id: 8, method: "item/tool/requestUserInput", params: base },
      "RAW",
      { source: "codex" },
    ],
    [
      "a failed turn",
      {
        method: "turn/completed",
        params: { threadId: "thr_1", turn: { id: "turn_1", status: "failed", error: { message: "usage limit" } } },
      },
      "RUN_ERROR",
      { message: "usage limit", code: "turn_failed" },
    ],
    [
      "a failed initialize",
      { id: "rb-initialize", error: { code: -32600, message: "Already initialized" } },
      "RUN_ERROR",
      { message: "initialize failed: Already initialized", code: "codex_startup" },
    ],
    [
      "an unknown notification",
      { method: "thread/tokenUsage/updated", params: { threadId: "thr_1" } },
      "RAW",
      { source: "codex" },
    ],
  ];

  it.each(cases)("%s", (_name, message, type, fields) => {
    const line = JSON.stringify(message);
    const event = codexEvents()(parseObject(line), line);
    expectValidEvents([event]);
    expect(event.type).toBe(type);
    expect(event.data).toMatchObject(fields);
    expect(nativeOf(event)).toEqual(message);
  });

  it("a line that is not JSON passes through as RAW text", () => {
    const event = codexEvents()(null, "panicked at src/main.rs");
    expectValidEvents([event]);
    expect(event).toEqual({ type: "RAW", data: { event: "panicked at src/main.rs", source: "codex" } });
  });
});
