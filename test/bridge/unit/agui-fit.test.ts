import { describe, expect, it } from "vitest";
import { fitEvent } from "../../../runner-bridge/src/adapters/agui/fit.ts";
import { expectValidEvents } from "./agui-support.ts";

const big = "y".repeat(500 * 1024);

describe("an event too big for a frame", () => {
  it("first loses its rawEvent copy of the native message, keeping the AG-UI event whole", () => {
    const line = JSON.stringify({ method: "item/agentMessage/delta", params: { itemId: "m1", delta: big } });
    const event = {
      sourceSeq: 4,
      type: "TEXT_MESSAGE_CONTENT",
      data: { messageId: "m1", delta: big, rawEvent: JSON.parse(line) },
    };
    const fitted = fitEvent(event, line);
    expectValidEvents([fitted]);
    expect(fitted).toEqual({
      sourceSeq: 4,
      type: "TEXT_MESSAGE_CONTENT",
      data: { messageId: "m1", delta: big, metadata: { rawEventOmitted: true } },
    });
  });

  it("then becomes RAW with the line's first 64 KiB and its length", () => {
    const line = big.repeat(2);
    const fitted = fitEvent({ sourceSeq: 9, type: "TEXT_MESSAGE_CHUNK", data: { messageId: "x", delta: line } }, line);
    expectValidEvents([fitted]);
    expect(fitted).toEqual({
      sourceSeq: 9,
      type: "RAW",
      data: {
        event: line.slice(0, 64 * 1024),
        source: "runner-bridge",
        metadata: { truncated: true, length: line.length },
      },
    });
  });

  it("an event that fits is left as it is", () => {
    const event = { sourceSeq: 1, type: "RUN_STARTED", data: { threadId: "t", runId: "r" } };
    expect(fitEvent(event, "{}")).toBe(event);
  });
});
