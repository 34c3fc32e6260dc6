import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INVALID } from "zod";
import { parseJson } from "../../src/protocol/json.ts";
import { MAX_BATCH_EVENTS, MAX_JSON_DEPTH } from "../../src/protocol/limits.ts";
import { invalid, ok, type Result } from "../../src/protocol/result.ts";
import { fastEventsFrame, parseRunnerFrameText, RunnerFrame, RunnerFrameParser } from "../../src/protocol/runner.ts";

/**
 * The runner's `events` frame has a hand-written fast path in front of zod (src/protocol/runner.ts).
 * It must accept exactly what zod accepts, answer the same value, and leave every refusal (and its
 * error) to zod: checked on random frames around every bound.
 */

type Mutation = (value: Record<string, unknown>) => unknown;

/** A valid value, or one mutated off a bound or out of shape (a third of the time). */
function mutated<T extends Record<string, unknown>>(valid: fc.Arbitrary<T>, mutations: Mutation[]) {
  return fc
    .tuple(valid, fc.option(fc.constantFrom(...mutations), { freq: 2 }))
    .map(([value, mutate]) => (mutate ? mutate({ ...value }) : value));
}

const set =
  (key: string, value: unknown): Mutation =>
  (v) => ({ ...v, [key]: value });
const drop =
  (key: string): Mutation =>
  ({ [key]: _, ...rest }) =>
    rest;

const event = mutated(
  fc.record(
    {
      sourceSeq: fc.oneof(fc.integer({ min: 1, max: 1_000 }), fc.constant(2 ** 53 - 1)),
      type: fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom("é".repeat(200), "x".repeat(200))),
      data: fc.jsonValue({ maxDepth: 3 }),
      time: fc.oneof(fc.string({ maxLength: 8 }), fc.constant("é".repeat(64))),
    },
    { requiredKeys: ["sourceSeq", "type"] },
  ),
  [
    ...[0, -1, 1.5, 2 ** 53, "1", null].map((bad) => set("sourceSeq", bad)),
    ...["", "x".repeat(201), "é".repeat(201), 7, null].map((bad) => set("type", bad)),
    ...["x".repeat(65), 12, null].map((bad) => set("time", bad)),
    set("extra", true),
    drop("sourceSeq"),
    drop("type"),
    () => null,
    () => [1],
    () => "event",
  ],
);

const events = (min: number, max: number) => fc.array(event, { minLength: min, maxLength: max });
const many = (n: number) => Array.from({ length: n }, (_, i) => ({ sourceSeq: i + 1, type: "t" }));

const frame = mutated(
  fc.record(
    {
      type: fc.constant("events"),
      epoch: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.constant(2 ** 53 - 1)),
      generation: fc.integer({ min: 1, max: 5 }),
      events: events(1, 4),
    },
    { requiredKeys: ["type", "epoch", "events"] },
  ),
  [
    set("type", "heartbeat"),
    set("type", "EVENTS"),
    ...[0, 1.5, 2 ** 53, "1", null].map((bad) => set("epoch", bad)),
    ...[0, 1.5, "2", null].map((bad) => set("generation", bad)),
    set("extra", 1),
    drop("epoch"),
    drop("events"),
    ...[[], null, {}, "[]", many(MAX_BATCH_EVENTS + 1)].map((bad) => set("events", bad)),
    set("events", many(MAX_BATCH_EVENTS)),
  ],
);

/** The value as JSON.parse would hand it over. */
function viaJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

describe("the runner's events frame: the fast path and zod agree", () => {
  it("on random frames around every bound: the same verdict, value and error", () => {
    let fast = 0;
    fc.assert(
      fc.property(frame, (generated) => {
        const input = viaJson(generated);
        const quick = fastEventsFrame(input);
        const zod = RunnerFrame.safeParse(input);
        const both = RunnerFrameParser.safeParse(input);
        if (quick !== INVALID) {
          fast += 1;
          expect(zod.success).toBe(true);
          expect(quick).toEqual(zod.data);
        }
        expect(both.success).toBe(zod.success);
        if (zod.success) expect(both.data).toEqual(zod.data);
        else expect(both.error?.issues).toEqual(zod.error.issues);
      }),
      { numRuns: 3_000, seed: 18 },
    );
    // The fast path was taken, not only the fallback.
    expect(fast).toBeGreaterThan(100);
  });

  it("takes a well-formed frame without zod: a fresh frame holding the parsed events as they are", () => {
    const input = viaJson({
      type: "events",
      epoch: 3,
      generation: 2,
      events: [
        { sourceSeq: 1, type: "TEXT_MESSAGE_CONTENT", data: { delta: "é" }, time: "2026-12-02T19:00:00.000Z" },
        { sourceSeq: 2, type: "RUN_FINISHED" },
      ],
    }) as { events: unknown[] };
    const quick = fastEventsFrame(input);
    expect(quick).toEqual(input);
    expect(quick).not.toBe(input);
    // Each event already has only RunnerEvent's keys and values: it is not copied.
    expect(quick !== INVALID && quick.type === "events" && quick.events[1]).toBe(input.events[1]);
    expect(quick).toEqual(RunnerFrame.parse(input));
  });

  it("leaves a `__proto__` key, an own key after JSON.parse, to zod, which refuses it", () => {
    const input = JSON.parse('{"type":"events","epoch":1,"events":[{"sourceSeq":1,"type":"t","__proto__":{"x":1}}]}');
    expect(fastEventsFrame(input)).toBe(INVALID);
    expect(RunnerFrameParser.safeParse(input).success).toBe(false);
  });
});

/** How a runner frame's text was judged before parseRunnerFrameText: depth scan, parse, then zod. */
function judgedInOrder(text: string): Result<RunnerFrame> {
  const json = parseJson(text, "invalid_frame");
  if (!json.ok) return json;
  const frame = RunnerFrameParser.safeParse(json.value);
  return frame.success ? ok(frame.data) : invalid("invalid_frame", frame.error);
}

/** `levels` nested arrays (or objects) around `inner`. */
function nested(levels: number, inner: unknown, asObjects: boolean): unknown {
  let value = inner;
  for (let i = 0; i < levels; i++) value = asObjects ? { k: value } : [value];
  return value;
}

const nearTheBound = MAX_JSON_DEPTH - 3; // the frame, `events` and the event sit above data
const deepData = fc
  .tuple(fc.integer({ min: nearTheBound - 2, max: nearTheBound + 2 }), fc.boolean(), fc.jsonValue({ maxDepth: 1 }))
  .map(([levels, asObjects, inner]) => nested(levels, inner, asObjects));

const frameText = fc.oneof(
  frame.map((value) => JSON.stringify(value)),
  // Events whose data nests up to and past the bound, among shallow ones.
  fc.tuple(fc.array(deepData, { minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 2 })).map(([datas, shallow]) =>
    JSON.stringify({
      type: "events",
      epoch: 1,
      events: [
        ...Array.from({ length: shallow }, (_, i) => ({ sourceSeq: i + 1, type: "t", data: { a: [1] } })),
        ...datas.map((data, i) => ({ sourceSeq: shallow + i + 1, type: "t", data })),
      ],
    }),
  ),
  // Deep frames of other types and shapes, and deep or shallow text that is not JSON.
  deepData.map((data) => JSON.stringify({ type: "complete", epoch: 1, outcome: { status: "succeeded", data } })),
  deepData.map((data) =>
    JSON.stringify({ type: "events", epoch: 1, events: [{ sourceSeq: 1, type: "t", extra: data }] }),
  ),
  deepData.map((data) => `${JSON.stringify(data).slice(0, -1)}`),
  fc.string({ maxLength: 20 }),
);

describe("a runner frame's text: parsed first, depth judged on the parsed events", () => {
  it("gives the verdict, value and error the depth scan, JSON.parse and zod gave in that order", () => {
    let deepRefused = 0;
    fc.assert(
      fc.property(frameText, (text) => {
        const now = parseRunnerFrameText(text);
        expect(now).toEqual(judgedInOrder(text));
        if (!now.ok && now.message.includes("levels of arrays")) deepRefused += 1;
      }),
      { numRuns: 3_000, seed: 21 },
    );
    expect(deepRefused).toBeGreaterThan(100);
  });

  it("refuses an events frame whose data passes the bound by one level, and takes it at the bound", () => {
    const frameWith = (levels: number) =>
      JSON.stringify({
        type: "events",
        epoch: 1,
        events: [{ sourceSeq: 1, type: "t", data: nested(levels, 0, false) }],
      });
    expect(parseRunnerFrameText(frameWith(nearTheBound)).ok).toBe(true);
    expect(parseRunnerFrameText(frameWith(nearTheBound + 1))).toMatchObject({ ok: false, code: "invalid_frame" });
  });
});
