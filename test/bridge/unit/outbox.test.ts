import { describe, expect, it } from "vitest";
import type { RunnerEvent } from "../../../src/protocol/index.ts";
import { MAX_FRAME_PAYLOAD, Outbox } from "../../../runner-bridge/src/outbox.ts";

const event = (sourceSeq: number, data: unknown = { n: sourceSeq }): RunnerEvent => ({ sourceSeq, type: "tick", data });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function outboxWith(seqs: number[], window?: number): Outbox {
  const outbox = new Outbox(window);
  outbox.claimed(0);
  for (const n of seqs) outbox.push(event(n));
  return outbox;
}

/** The sourceSeqs of every batch the outbox hands out until it has nothing left to send. */
function drain(outbox: Outbox): number[][] {
  const batches: number[][] = [];
  for (let batch = outbox.nextBatch(); batch; batch = outbox.nextBatch()) batches.push(batch.map((e) => e.sourceSeq));
  return batches;
}

describe("batching", () => {
  it("hands out each event once per connection, in order, at most 500 to a batch", () => {
    const outbox = outboxWith(range(1, 1200));
    expect(drain(outbox)).toEqual([range(1, 500), range(501, 1000), range(1001, 1200)]);
    expect(outbox.nextBatch()).toBeNull();
  });

  it("closes a batch before it would pass ~900 KiB, and sends an event that big on its own", () => {
    const outbox = new Outbox();
    outbox.claimed(0);
    const third = "x".repeat(Math.floor(MAX_FRAME_PAYLOAD / 3));
    for (const n of range(1, 4)) outbox.push(event(n, third)); // two fit in a frame, three with their JSON do not
    outbox.push(event(5, "y".repeat(MAX_FRAME_PAYLOAD)));
    outbox.push(event(6));
    expect(drain(outbox)).toEqual([[1, 2], [3, 4], [5], [6]]);
  });
});

describe("linger", () => {
  it("holds a frame that is not full until its oldest event has waited the linger, then sends it whole", () => {
    const outbox = new Outbox();
    outbox.claimed(0);
    outbox.push(event(1), 1000);
    outbox.push(event(2), 1010);
    expect(outbox.lingering(1010, 0)).toBe(false); // no linger: at once
    expect(outbox.lingering(1010, 25)).toBe(true);
    outbox.push(event(3), 1020);
    expect(outbox.lingering(1024, 25)).toBe(true);
    expect(outbox.lingering(1025, 25)).toBe(false);
    expect(drain(outbox)).toEqual([[1, 2, 3]]);
    expect(outbox.lingering(1025, 25)).toBe(false); // nothing unsent
  });

  it("never holds a full frame: 500 events, or a frame the byte bound closes", () => {
    const full = outboxWith(range(1, 500));
    expect(full.lingering(0, 1000)).toBe(false);
    const big = new Outbox();
    big.claimed(0);
    const half = "x".repeat(Math.floor(MAX_FRAME_PAYLOAD / 2));
    for (const n of range(1, 3)) big.push(event(n, half), 0);
    expect(big.lingering(0, 1000)).toBe(false);
  });

  it("waits from the oldest event not yet sent on this connection, not from an older one already sent", () => {
    const outbox = new Outbox();
    outbox.claimed(0);
    outbox.push(event(1), 0);
    expect(drain(outbox)).toEqual([[1]]);
    outbox.push(event(2), 100);
    expect(outbox.lingering(110, 25)).toBe(true);
    expect(outbox.lingering(125, 25)).toBe(false);
  });
});

describe("acknowledgements and claims", () => {
  it("an ack drops the events it covers and frees their room", () => {
    const outbox = outboxWith(range(1, 10), 10);
    expect(outbox.room()).toBe(0);
    outbox.acknowledged(4);
    expect(outbox.acked).toBe(4);
    expect(outbox.room()).toBe(4);
    outbox.acknowledged(2); // a late, lower ack changes nothing
    expect(outbox.acked).toBe(4);
  });

  it("a new claim sends again everything after the edge's ackedSourceSeq", () => {
    const outbox = outboxWith(range(1, 10));
    expect(drain(outbox)).toEqual([range(1, 10)]);
    outbox.claimed(6);
    expect(drain(outbox)).toEqual([range(7, 10)]);
  });

  it("keeps no event the edge already holds", () => {
    const outbox = new Outbox();
    outbox.claimed(5);
    for (const n of range(3, 7)) outbox.push(event(n));
    expect(drain(outbox)).toEqual([[6, 7]]);
  });
});

describe("gaps", () => {
  it("a gap inside memory resends from the expected event", () => {
    const outbox = outboxWith(range(1, 10));
    drain(outbox);
    outbox.acknowledged(2);
    expect(outbox.gap(5)).toBe("resend");
    expect(drain(outbox)).toEqual([range(5, 10)]);
  });

  it("a gap before memory empties the outbox and asks for the journal again", () => {
    const outbox = outboxWith(range(1, 10));
    drain(outbox);
    outbox.acknowledged(8);
    expect(outbox.gap(4)).toBe("reread");
    expect(outbox.acked).toBe(3);
    expect(drain(outbox)).toEqual([]);
    for (const n of range(1, 10)) outbox.push(event(n)); // the journal, read again from byte 0
    expect(drain(outbox)).toEqual([range(4, 10)]);
  });
});
