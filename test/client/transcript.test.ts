import { type Row, Transcript } from "@agent-run/client/transcript";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";

// The SDK's AG-UI fold, fed whole logs; each test compares every row it folds them into.

type Source = RunEvent["source"];

function log(...entries: [type: string, data: unknown, source?: Source][]): RunEvent[] {
  return entries.map(([type, data, source], i) => ({
    seq: i + 1,
    epoch: 1,
    source:
      source ??
      (type.includes(".") && !type.startsWith("agent.") && type !== "approval.requested" ? "control" : "runner"),
    type,
    data,
    time: "2026-01-01T00:00:00.000Z",
  }));
}

/** A row with its events named by seq, so whole transcripts read as short literals. */
function shape(row: Row): Record<string, unknown> {
  const { events, ...rest } = row;
  const seqs = events.map((event) => event.seq);
  if ("event" in rest) {
    const { event, ...fields } = rest;
    return { ...fields, seqs, type: event.type };
  }
  return { ...rest, seqs };
}

const fold = (events: RunEvent[]) => {
  const transcript = new Transcript(events);
  return { transcript, rows: transcript.rows.map(shape) };
};

const streamed = { complete: true, stopped: false };

describe("the transcript fold", () => {
  it("joins a streamed message and a whole one by messageId, and plain output lines into one row", () => {
    const { rows } = fold(
      log(
        ["TEXT_MESSAGE_START", { messageId: "m1", role: "assistant" }],
        ["TEXT_MESSAGE_CONTENT", { messageId: "m1", delta: "Hel" }],
        ["TEXT_MESSAGE_CONTENT", { messageId: "m1", delta: "lo" }],
        ["TEXT_MESSAGE_END", { messageId: "m1" }],
        ["TEXT_MESSAGE_CHUNK", { messageId: "m2", role: "user", delta: "hi" }],
        ["TEXT_MESSAGE_CONTENT", { delta: "line 1\n" }],
        ["TEXT_MESSAGE_CONTENT", { delta: "line 2\n" }],
      ),
    );
    expect(rows).toEqual([
      {
        kind: "message",
        key: "msg:m1",
        firstSeq: 1,
        version: 4,
        category: "messages",
        ...streamed,
        role: "assistant",
        identified: true,
        text: "Hello",
        seqs: [1, 2, 3, 4],
      },
      {
        kind: "message",
        key: "msg:m2",
        firstSeq: 5,
        version: 1,
        category: "messages",
        ...streamed,
        role: "user",
        identified: true,
        text: "hi",
        seqs: [5],
      },
      {
        kind: "message",
        key: "plain:6",
        firstSeq: 6,
        version: 2,
        category: "messages",
        ...streamed,
        role: "output",
        identified: false,
        text: "line 1\nline 2\n",
        seqs: [6, 7],
      },
    ]);
  });

  it("folds reasoning by messageId and the id-less THINKING_* blocks one row each", () => {
    const { rows } = fold(
      log(
        ["REASONING_START", { messageId: "r1" }],
        ["REASONING_MESSAGE_START", { messageId: "r1" }],
        ["REASONING_MESSAGE_CONTENT", { messageId: "r1", delta: "why" }],
        ["REASONING_MESSAGE_END", { messageId: "r1" }],
        ["THINKING_START", {}],
        ["THINKING_TEXT_MESSAGE_CONTENT", { delta: "hmm" }],
        ["THINKING_END", {}],
      ),
    );
    expect(rows).toEqual([
      {
        kind: "reasoning",
        key: "why:r1",
        firstSeq: 1,
        version: 4,
        category: "messages",
        ...streamed,
        text: "why",
        seqs: [1, 2, 3, 4],
      },
      {
        kind: "reasoning",
        key: "think:5",
        firstSeq: 5,
        version: 3,
        category: "messages",
        ...streamed,
        text: "hmm",
        seqs: [5, 6, 7],
      },
    ]);
  });

  it("joins a tool call with its result and links the approval that names it both ways", () => {
    const { rows, transcript } = fold(
      log(
        ["TOOL_CALL_START", { toolCallId: "t1", toolCallName: "shell" }],
        ["TOOL_CALL_ARGS", { toolCallId: "t1", delta: '{"command":' }],
        ["TOOL_CALL_ARGS", { toolCallId: "t1", delta: '"ls"}' }],
        ["TOOL_CALL_END", { toolCallId: "t1" }],
        ["approval.requested", { requestId: "a1", toolCallId: "t1" }],
        ["approval.resolved", { requestId: "a1", decision: "approve" }],
        ["TOOL_CALL_RESULT", { toolCallId: "t1", content: "README.md" }],
      ),
    );
    expect(rows).toEqual([
      {
        kind: "tool",
        key: "tool:t1",
        firstSeq: 1,
        version: 7,
        category: "tools",
        ...streamed,
        toolCallId: "t1",
        name: "shell",
        args: '{"command":"ls"}',
        result: "README.md",
        approval: { requestId: "a1", seq: 5, state: "approved" },
        seqs: [1, 2, 3, 4, 7],
      },
      {
        kind: "control",
        key: "e:5",
        firstSeq: 5,
        version: 1,
        category: "approvals",
        tool: { seq: 1, name: "shell", headline: "ls" },
        seqs: [5],
        type: "approval.requested",
      },
      {
        kind: "control",
        key: "e:6",
        firstSeq: 6,
        version: 0,
        category: "approvals",
        seqs: [6],
        type: "approval.resolved",
      },
    ]);
    expect(transcript.pendingApprovals).toEqual(new Set());
    expect(transcript.activeTool).toBeNull();
    expect([...transcript.tools.keys()]).toEqual(["t1"]);
  });

  it("links an approval asked before its tool call streams, and keeps it pending until settled", () => {
    const { rows, transcript } = fold(
      log(
        ["approval.requested", { requestId: "a1", toolCallId: "t1" }],
        ["TOOL_CALL_CHUNK", { toolCallId: "t1", name: "edit", delta: '{"path":"a.ts"}' }],
        ["approval.requested", { requestId: "a2" }],
      ),
    );
    expect(rows).toEqual([
      {
        kind: "control",
        key: "e:1",
        firstSeq: 1,
        version: 1,
        category: "approvals",
        tool: { seq: 2, name: "edit", headline: "a.ts" },
        seqs: [1],
        type: "approval.requested",
      },
      {
        kind: "tool",
        key: "tool:t1",
        firstSeq: 2,
        version: 2,
        category: "tools",
        complete: true,
        stopped: false,
        toolCallId: "t1",
        name: "edit",
        args: '{"path":"a.ts"}',
        result: null,
        approval: { requestId: "a1", seq: 1, state: "pending" },
        seqs: [2],
      },
      {
        kind: "control",
        key: "e:3",
        firstSeq: 3,
        version: 0,
        category: "approvals",
        seqs: [3],
        type: "approval.requested",
      },
    ]);
    expect([...transcript.pendingApprovals]).toEqual(["a1", "a2"]);
    expect(transcript.activeTool?.toolCallId).toBe("t1");
  });

  it("marks what a turn ended mid-stream as stopped, and counts turns", () => {
    const { rows, transcript } = fold(
      log(
        ["RUN_STARTED", { threadId: "th", runId: "r" }],
        ["TEXT_MESSAGE_START", { messageId: "m1" }],
        ["TEXT_MESSAGE_CONTENT", { messageId: "m1", delta: "half" }],
        ["TOOL_CALL_START", { toolCallId: "t1", toolCallName: "shell" }],
        ["RUN_FINISHED", {}],
        ["RUN_STARTED", {}],
      ),
    );
    const stopped = { complete: false, stopped: true };
    expect(rows).toEqual([
      { kind: "lifecycle", key: "e:1", firstSeq: 1, version: 0, category: "control", seqs: [1], type: "RUN_STARTED" },
      {
        kind: "message",
        key: "msg:m1",
        firstSeq: 2,
        version: 3,
        category: "messages",
        ...stopped,
        role: "assistant",
        identified: true,
        text: "half",
        seqs: [2, 3],
      },
      {
        kind: "tool",
        key: "tool:t1",
        firstSeq: 4,
        version: 2,
        category: "tools",
        ...stopped,
        toolCallId: "t1",
        name: "shell",
        args: "",
        result: null,
        approval: null,
        seqs: [4],
      },
      { kind: "lifecycle", key: "e:5", firstSeq: 5, version: 0, category: "control", seqs: [5], type: "RUN_FINISHED" },
      { kind: "lifecycle", key: "e:6", firstSeq: 6, version: 0, category: "control", seqs: [6], type: "RUN_STARTED" },
    ]);
    expect({ turns: transcript.turns, inTurn: transcript.inTurn, activeTool: transcript.activeTool }).toEqual({
      turns: 2,
      inTurn: true,
      activeTool: null,
    });
  });

  it("keeps the agent's session, the queued commands, a takeover's predecessor and the usage reported", () => {
    const { rows, transcript } = fold(
      log(
        ["run.claimed", { runnerId: "r-1", epoch: 1, previousEpoch: 0 }],
        ["agent.session", { provider: "codex", id: "thread-9" }],
        ["agent.usage", { inputTokens: 10, outputTokens: 4, costUsd: 0.1 }],
        [
          "TEXT_MESSAGE_END",
          { messageId: "m", agentUsage: { inputTokens: 5, cachedInputTokens: 2, outputTokens: 1, costUsd: 0.2 } },
        ],
        ["agent.usage", { inputTokens: 1000 }, "control"],
        ["command.queued", { commandId: "c1", type: "input", text: "go" }],
        ["command.acked", { commandId: "c1", state: "rejected" }],
        ["run.claimed", { runnerId: "r-2", epoch: 2, previousEpoch: 1 }],
        ["run.finished", { outcome: { status: "failed" } }],
      ),
    );
    expect(rows).toEqual([
      { kind: "control", key: "e:1", firstSeq: 1, version: 0, category: "control", seqs: [1], type: "run.claimed" },
      { kind: "session", key: "e:2", firstSeq: 2, version: 0, category: "control", seqs: [2], type: "agent.session" },
      { kind: "raw", key: "e:3", firstSeq: 3, version: 0, category: "other", seqs: [3], type: "agent.usage" },
      {
        kind: "message",
        key: "msg:m",
        firstSeq: 4,
        version: 1,
        category: "messages",
        ...streamed,
        role: "assistant",
        identified: true,
        text: "",
        seqs: [4],
      },
      { kind: "raw", key: "e:5", firstSeq: 5, version: 0, category: "other", seqs: [5], type: "agent.usage" },
      { kind: "control", key: "e:6", firstSeq: 6, version: 0, category: "control", seqs: [6], type: "command.queued" },
      { kind: "control", key: "e:7", firstSeq: 7, version: 0, category: "errors", seqs: [7], type: "command.acked" },
      {
        kind: "control",
        key: "e:8",
        firstSeq: 8,
        version: 0,
        category: "control",
        replaced: "r-1",
        seqs: [8],
        type: "run.claimed",
      },
      { kind: "control", key: "e:9", firstSeq: 9, version: 0, category: "errors", seqs: [9], type: "run.finished" },
    ]);
    expect({
      session: transcript.session,
      commands: [...transcript.commands],
      usage: { total: transcript.usage.total, reports: transcript.usage.reports },
    }).toEqual({
      session: { provider: "codex", id: "thread-9" },
      commands: [["c1", { commandId: "c1", type: "input", text: "go" }]],
      usage: {
        total: { inputTokens: 15, cachedInputTokens: 2, outputTokens: 5, reasoningTokens: 0, costUsd: 0.3 },
        reports: 2,
      },
    });
  });

  it("gives each seq the row that shows it, the same whether the log is folded at once or event by event", () => {
    const events = log(
      ["TOOL_CALL_START", { toolCallId: "t1", toolCallName: "shell" }],
      ["CUSTOM", { name: "x", value: 1 }],
      ["TOOL_CALL_RESULT", { toolCallId: "t1", content: { ok: true } }],
    );
    const whole = new Transcript(events);
    const piecewise = new Transcript();
    const placed = events.map((event) => piecewise.add(event).key);
    expect(placed).toEqual(["tool:t1", "e:2", "tool:t1"]);
    expect(events.map((event) => whole.rowOf(event.seq)?.key)).toEqual(placed);
    expect(piecewise.rows.map(shape)).toEqual(whole.rows.map(shape));
    expect(whole.tools.get("t1")?.result).toBe('{"ok":true}');
  });
});
