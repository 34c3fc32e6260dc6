import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { runnerEventJson } from "../../src/run/run-log.ts";

/**
 * A runner event's stored text is written out around its type and data (src/run/run-log.ts
 * runnerEventJson) instead of JSON.stringify of the whole event: every reader and the judging of
 * a resend depend on those bytes, so they must be stringify's, byte for byte, or not answered.
 */

const integer = fc.oneof(
  fc.integer({ min: 1, max: 1_000_000 }),
  fc.constantFrom(1, 2 ** 53 - 1, 2 ** 53, -0, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 1e21),
);
// Every time toISOString makes, years past 9999 and before 0 included, and strings it never makes.
const time = fc.oneof(
  fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom("2026-12-02T19:00:00.000Z", "", 'a"b', "2026-12-02T19:00:00Z", "2026-12-02T19:00:00.000Z\n"),
  fc.string({ unit: "binary", maxLength: 30 }),
);
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 10 }),
  fc.constantFrom("\u2028", "\ud800", "\udc00x", '"\\', "\u0000\u001f\u007f", "é"),
);
const data = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, -0, 1e21, 1.5e-7, 2 ** 53 + 2, { b: 1, "1": 2, a: [1.0, "\ud83d"] }, "\u2029"),
);

/** The event as toEvents builds it: the same keys in the same order. */
function runnerEvent(
  seq: number,
  epoch: number,
  sourceSeq: number,
  generation: number,
  type: string,
  d: unknown,
  t: string,
  agentTime?: string,
): RunEvent {
  const event = { seq, epoch, source: "runner", sourceSeq, generation, type, data: d, time: t } as RunEvent;
  if (agentTime !== undefined) event.agentTime = agentTime;
  return event;
}

describe("a runner event's stored text", () => {
  it("is JSON.stringify of the event whenever it is answered, on random events", () => {
    let answered = 0;
    fc.assert(
      fc.property(
        integer,
        integer,
        integer,
        integer,
        text,
        data,
        time,
        fc.option(time, { nil: undefined }),
        (...args) => {
          const event = runnerEvent(...args);
          const json = runnerEventJson(event);
          if (json !== null) {
            answered += 1;
            expect(json).toBe(JSON.stringify(event));
          }
        },
      ),
      { numRuns: 5_000, seed: 7 },
    );
    expect(answered).toBeGreaterThan(100);
  });

  it("is answered for every event a runner's frame makes: safe integers, toISOString times, JSON data", () => {
    fc.assert(
      fc.property(
        fc.tuple(fc.integer({ min: 1 }), fc.integer({ min: 1 }), fc.integer({ min: 1 }), fc.integer({ min: 1 })),
        text,
        fc.jsonValue({ maxDepth: 3 }),
        fc.date({ noInvalidDate: true }),
        fc.option(fc.date({ noInvalidDate: true }), { nil: undefined }),
        ([seq, epoch, sourceSeq, generation], type, d, at, agentAt) => {
          const event = runnerEvent(
            seq,
            epoch,
            sourceSeq,
            generation,
            type,
            d,
            at.toISOString(),
            agentAt?.toISOString(),
          );
          expect(runnerEventJson(event)).toBe(JSON.stringify(event));
        },
      ),
      { numRuns: 3_000, seed: 11 },
    );
  });

  it("is refused where stringify would differ: a number not an integer, a time JSON escapes, data it leaves out", () => {
    const ok = runnerEvent(1, 1, 1, 1, "t", null, "2026-12-02T19:00:00.000Z");
    expect(runnerEventJson(ok)).toBe(JSON.stringify(ok));
    expect(runnerEventJson({ ...ok, seq: Number.NaN })).toBeNull();
    expect(runnerEventJson({ ...ok, epoch: 1.5 })).toBeNull();
    expect(runnerEventJson({ ...ok, time: 'x"' })).toBeNull();
    expect(runnerEventJson({ ...ok, agentTime: "\n" })).toBeNull();
    expect(runnerEventJson({ ...ok, data: undefined })).toBeNull();
  });
});
