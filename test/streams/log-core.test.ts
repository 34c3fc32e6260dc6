import { describe, expect, test } from "vitest";
import { encodeOffset, LOG_START, parseOffset } from "../../src/log/offsets.ts";
import { judgeProducer, RUNNER_PRODUCER_RULES, STREAM_PRODUCER_RULES } from "../../src/log/producers.ts";

describe("log offsets", () => {
  test("tokens sort in log order and round-trip", () => {
    const tokens = [LOG_START, { seq: 1, pos: 5 }, { seq: 2, pos: 9 }, { seq: 10, pos: 100 }].map(encodeOffset);
    expect(tokens[0]).toBe("0000000000000000_0000000000000000");
    expect([...tokens].sort()).toEqual(tokens);
    expect(parseOffset(tokens[3] as string)).toEqual({ kind: "at", seq: 10, pos: 100 });
  });

  test("sentinels and malformed offsets", () => {
    expect(parseOffset("-1")).toEqual({ kind: "start" });
    expect(parseOffset("now")).toEqual({ kind: "now" });
    for (const bad of [
      "",
      "0",
      "1_2",
      "../x",
      "0000000000000000_000000000000000a",
      "0000000000000000_0000000000000000 ",
    ]) {
      expect(parseOffset(bad)).toBeNull();
    }
  });
});

describe("producer fencing, Durable Streams rules", () => {
  const claim = (epoch: number, seq: number) => ({ producerId: "p", epoch, seq });

  test("a new producer starts at seq 0 in any epoch", () => {
    expect(judgeProducer(null, claim(3, 0), STREAM_PRODUCER_RULES)).toEqual({
      kind: "accepted",
      state: { epoch: 3, lastSeq: 0 },
    });
    expect(judgeProducer(null, claim(0, 1), STREAM_PRODUCER_RULES)).toEqual({ kind: "gap", expected: 0, received: 1 });
  });

  test("same epoch: next seq accepted, older seqs duplicate, skipped seqs a gap", () => {
    const state = { epoch: 1, lastSeq: 4 };
    expect(judgeProducer(state, claim(1, 5), STREAM_PRODUCER_RULES)).toEqual({
      kind: "accepted",
      state: { epoch: 1, lastSeq: 5 },
    });
    expect(judgeProducer(state, claim(1, 2), STREAM_PRODUCER_RULES)).toEqual({ kind: "duplicate", lastSeq: 4 });
    expect(judgeProducer(state, claim(1, 7), STREAM_PRODUCER_RULES)).toEqual({ kind: "gap", expected: 5, received: 7 });
  });

  test("epochs fence: older is stale, newer must restart at 0", () => {
    const state = { epoch: 2, lastSeq: 9 };
    expect(judgeProducer(state, claim(1, 10), STREAM_PRODUCER_RULES)).toEqual({ kind: "stale_epoch", current: 2 });
    expect(judgeProducer(state, claim(3, 4), STREAM_PRODUCER_RULES)).toEqual({ kind: "bad_epoch_start", expected: 0 });
    expect(judgeProducer(state, claim(3, 0), STREAM_PRODUCER_RULES)).toEqual({
      kind: "accepted",
      state: { epoch: 3, lastSeq: 0 },
    });
  });
});

describe("producer fencing, runner rules (server-assigned claim epochs, sourceSeq from 1)", () => {
  const claim = (epoch: number, seq: number) => ({ producerId: "runner", epoch, seq });

  test("sourceSeq runs on across claims; only the current claim epoch may append", () => {
    const afterClaim = { epoch: 2, lastSeq: 7 };
    expect(judgeProducer(afterClaim, claim(2, 8), RUNNER_PRODUCER_RULES)).toEqual({
      kind: "accepted",
      state: { epoch: 2, lastSeq: 8 },
    });
    expect(judgeProducer(afterClaim, claim(2, 3), RUNNER_PRODUCER_RULES)).toEqual({ kind: "duplicate", lastSeq: 7 });
    expect(judgeProducer(afterClaim, claim(2, 10), RUNNER_PRODUCER_RULES)).toEqual({
      kind: "gap",
      expected: 8,
      received: 10,
    });
    expect(judgeProducer(afterClaim, claim(1, 8), RUNNER_PRODUCER_RULES)).toEqual({ kind: "stale_epoch", current: 2 });
    // A runner cannot raise its own epoch: only a claim (ProducerTable.bump) does.
    expect(judgeProducer(afterClaim, claim(3, 8), RUNNER_PRODUCER_RULES)).toEqual({ kind: "stale_epoch", current: 2 });
  });

  test("before any claim every epoch is stale", () => {
    expect(judgeProducer(null, claim(1, 1), RUNNER_PRODUCER_RULES)).toEqual({ kind: "stale_epoch", current: 0 });
  });
});
