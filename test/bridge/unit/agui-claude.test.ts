import { describe, expect, it } from "vitest";
import { claudeEvents } from "../../../runner-bridge/src/adapters/agui/claude-events.ts";
import { parseObject } from "../../../runner-bridge/src/adapters/common.ts";
import { expectValidEvents, nativeOf, recordedLines, renderWithAgUiClient, toClientStream } from "./agui-support.ts";
import { claudeFixtureSession } from "./fixture-sessions.ts";
import { mapLines } from "./map-lines.ts";

const mapAll = (lines: string[]) => mapLines(claudeEvents, lines);

describe("claude stream-json messages as AG-UI events", () => {
  it("the recorded real session: the session is reported, the not-logged-in message shown, the turn fails with it", () => {
    const lines = recordedLines("claude-stream-json");
    const events = mapAll(lines);
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual(["RAW", "agent.session", "TEXT_MESSAGE_CHUNK", "RUN_ERROR"]);
    const init = JSON.parse(lines[1] as string) as { session_id: string };
    expect(events[1]?.data).toMatchObject({ provider: "claude-code", id: init.session_id });
    expect(events[2]?.data).toMatchObject({ role: "assistant", delta: "Not logged in · Please run /login" });
    expect(events[3]?.data).toMatchObject({ message: "Not logged in · Please run /login", code: "claude_api_error" });
    expect(events.map(nativeOf)).toEqual(lines.map((line) => JSON.parse(line)));
  });

  it("a strict AG-UI client renders the recorded session as one failed turn with claude's message", async () => {
    const { messages, errors } = await renderWithAgUiClient(
      toClientStream(mapAll(recordedLines("claude-stream-json"))),
    );
    expect(errors).toEqual([]);
    expect(messages).toEqual([
      { id: expect.any(String), role: "assistant", content: "Not logged in · Please run /login" },
    ]);
  });

  it("the fixture's approval turn: the tool call, its approval, its result, the answer, a finished run", async () => {
    const events = mapAll(await claudeFixtureSession("clean up, needs approval"));
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual([
      "RAW", // control_response to initialize
      "agent.session",
      "TOOL_CALL_CHUNK",
      "approval.requested",
      "TOOL_CALL_RESULT",
      "TEXT_MESSAGE_CHUNK",
      "RUN_FINISHED",
    ]);
    expect(events[2]?.data).toMatchObject({ toolCallId: "toolu_1", toolCallName: "Bash" });
    expect(events[3]?.data).toMatchObject({
      requestId: "perm-1",
      toolName: "Bash",
      input: { command: "rm -rf build" },
    });
    expect(events[4]?.data).toMatchObject({ toolCallId: "toolu_1", content: "ran: rm -rf build" });
    expect(events[6]?.data).toMatchObject({ threadId: "sess-fixture", outcome: { type: "success" } });

    const { messages, warnings, errors } = await renderWithAgUiClient(toClientStream(events));
    expect([...errors, ...warnings]).toEqual([]);
    expect(messages.map((m) => [m.role, "content" in m ? m.content : undefined])).toEqual([
      ["assistant", undefined],
      ["tool", "ran: rm -rf build"],
      ["assistant", "Build directory removed."],
    ]);
  });

  it("an interrupted turn ends in RUN_ERROR with claude's result", async () => {
    const events = mapAll(await claudeFixtureSession("wait for interrupt"));
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual(["RAW", "agent.session", "TEXT_MESSAGE_CHUNK", "RAW", "RUN_ERROR"]);
    expect(events[4]?.data).toMatchObject({ message: "Interrupted.", code: "claude_error_during_execution" });
  });
});

describe("claude messages the offline session cannot show", () => {
  const session = { session_id: "s1", parent_tool_use_id: null };
  const stream = (event: unknown) => ({ type: "stream_event", event, ...session });

  it("--include-partial-messages streams as START/CONTENT/END; the whole messages that follow are RAW", async () => {
    const messages = [
      { type: "system", subtype: "init", uuid: "init-1", ...session },
      { type: "user", message: { role: "user", content: "list files" }, uuid: "u1", isReplay: true, ...session },
      stream({ type: "message_start", message: { id: "msg_1", role: "assistant", content: [] } }),
      stream({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }),
      stream({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Use ls." } }),
      stream({ type: "content_block_stop", index: 0 }),
      stream({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
      stream({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Listing" } }),
      stream({ type: "content_block_stop", index: 1 }),
      stream({
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "toolu_9", name: "Bash", input: {} },
      }),
      stream({
        type: "content_block_delta",
        index: 2,
        delta: { type: "input_json_delta", partial_json: '{"command":' },
      }),
      stream({ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '"ls"}' } }),
      stream({ type: "content_block_stop", index: 2 }),
      stream({ type: "message_delta", delta: { stop_reason: "tool_use" } }),
      stream({ type: "message_stop" }),
      {
        type: "assistant",
        message: { id: "msg_1", role: "assistant", content: [{ type: "text", text: "Listing" }] },
        ...session,
      },
      {
        type: "user",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_9", content: [{ type: "text", text: "a.ts" }] }],
        },
        ...session,
      },
      { type: "result", subtype: "success", is_error: false, result: "Listing", ...session },
    ];
    const events = mapAll(messages.map((m) => JSON.stringify(m)));
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual([
      "agent.session",
      "TEXT_MESSAGE_CHUNK", // the replayed user message
      "RAW", // message_start
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_END",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "RAW", // message_delta
      "RAW", // message_stop
      "RAW", // the whole msg_1, already streamed
      "TOOL_CALL_RESULT",
      "RUN_FINISHED",
    ]);
    expect(events.at(-1)?.data).toMatchObject({ threadId: "s1", runId: "init-1", result: "Listing" });

    const rendered = await renderWithAgUiClient(toClientStream(events));
    expect([...rendered.errors, ...rendered.warnings]).toEqual([]);
    expect(rendered.messages).toEqual([
      { id: "u1", role: "user", content: "list files" },
      { id: "msg_1:thinking", role: "reasoning", content: "Use ls." },
      {
        id: "msg_1",
        role: "assistant",
        content: "Listing",
        toolCalls: [{ id: "toolu_9", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } }],
      },
      { id: "toolu_9:result", role: "tool", toolCallId: "toolu_9", content: "a.ts" },
    ]);
  });

  it("a can_use_tool request carries the tool call it is about", () => {
    const line = JSON.stringify({
      type: "control_request",
      request_id: "req-1",
      request: { subtype: "can_use_tool", tool_name: "Write", input: { file_path: "a" }, tool_use_id: "toolu_2" },
    });
    const event = claudeEvents()(parseObject(line), line);
    expectValidEvents([event]);
    expect(event).toMatchObject({
      type: "approval.requested",
      data: { requestId: "req-1", toolName: "Write", input: { file_path: "a" }, toolCallId: "toolu_2" },
    });
  });

  it("messages without a counterpart and lines that are not JSON pass through as RAW", () => {
    const lines = [
      JSON.stringify({ type: "system", subtype: "compact_boundary", ...session }),
      JSON.stringify({ type: "control_request", request_id: "h1", request: { subtype: "hook_callback" } }),
      JSON.stringify({ type: "rate_limit_event", ...session }),
      "not json",
    ];
    const events = mapAll(lines);
    expectValidEvents(events);
    expect(events.map((e) => [e.type, (e.data as { source: string }).source])).toEqual(
      lines.map(() => ["RAW", "claude-code"]),
    );
  });
});
