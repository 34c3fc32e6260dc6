import { describe, expect, it } from "vitest";
import { ndjsonEvents } from "../../../runner-bridge/src/adapters/agui/ndjson-events.ts";
import { MAX_LINE_CHARS } from "../../../runner-bridge/src/adapters/common.ts";
import { expectValidEvents, renderWithAgUiClient, toClientStream } from "./agui-support.ts";

const mapAll = (lines: string[]) => {
  const map = ndjsonEvents();
  return lines.map((line) => map(line));
};

describe("ndjson lines as events", () => {
  it("AG-UI events and our own pass through; other typed objects become CUSTOM; text lines become one message per run of lines", () => {
    const events = mapAll([
      JSON.stringify({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
      JSON.stringify({ type: "agent.session", provider: "my-agent", id: "conv-7" }),
      "compiling…",
      "done",
      JSON.stringify({ type: "progress", pct: 50 }),
      "[1,2,3]",
      JSON.stringify({ type: "approval.requested", requestId: "r1", tool: "deploy" }),
      JSON.stringify({ type: "TEXT_MESSAGE_CHUNK", messageId: "m1", role: "assistant", delta: "Deployed." }),
      JSON.stringify({ type: "RUN_FINISHED", threadId: "t1", runId: "r1" }),
    ]);
    expectValidEvents(events);
    expect(events).toEqual([
      { type: "RUN_STARTED", data: { threadId: "t1", runId: "r1" } },
      { type: "agent.session", data: { provider: "my-agent", id: "conv-7" } },
      { type: "TEXT_MESSAGE_CHUNK", data: { messageId: "line-3", role: "assistant", delta: "compiling…\n" } },
      { type: "TEXT_MESSAGE_CHUNK", data: { messageId: "line-3", role: "assistant", delta: "done\n" } },
      { type: "CUSTOM", data: { name: "progress", value: { pct: 50 } } },
      { type: "TEXT_MESSAGE_CHUNK", data: { messageId: "line-6", role: "assistant", delta: "[1,2,3]\n" } },
      { type: "approval.requested", data: { requestId: "r1", tool: "deploy" } },
      { type: "TEXT_MESSAGE_CHUNK", data: { messageId: "m1", role: "assistant", delta: "Deployed." } },
      { type: "RUN_FINISHED", data: { threadId: "t1", runId: "r1" } },
    ]);
  });

  it("a strict AG-UI client renders a plain-text agent's output as assistant messages", async () => {
    const events = mapAll(["hello", "world", JSON.stringify({ type: "status", ok: true }), "bye"]);
    const { messages, errors } = await renderWithAgUiClient(toClientStream(events));
    expect(errors).toEqual([]);
    expect(messages).toEqual([
      { id: "line-1", role: "assistant", content: "hello\nworld\n" },
      { id: "line-4", role: "assistant", content: "bye\n" },
    ]);
  });

  it("a line over the limit is text, truncated, saying how long it was", () => {
    const long = "x".repeat(MAX_LINE_CHARS + 10);
    const [event] = mapAll([long]);
    expectValidEvents([event!]);
    expect(event?.data).toEqual({
      messageId: "line-1",
      role: "assistant",
      delta: `${"x".repeat(MAX_LINE_CHARS)}\n`,
      metadata: { truncated: true, length: MAX_LINE_CHARS + 10 },
    });
  });
});
