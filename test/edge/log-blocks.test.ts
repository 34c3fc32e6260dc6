import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BLOCK_MAX_BYTES, BLOCK_MAX_ENTRIES } from "../../src/log/blocks.ts";
import { LogCore } from "../../src/log/log.ts";
import { LOG_START, type LogPosition } from "../../src/log/offsets.ts";
import { judgeProducer, type ProducerState, RUNNER_PRODUCER_RULES } from "../../src/log/producers.ts";
import { runObject, uniqueRunId } from "./helpers.ts";

/**
 * The log in blocks against a model of it as a plain list of entries: random mixes of frame
 * sizes (one entry to past a block's entry bound, bytes past its byte bound), runner resends
 * (duplicates, conflicting content, gaps, stale epochs) judged as a run judges them, and purges.
 * After every step each read the log answers is compared with the model's.
 */

interface ModelEntry {
  body: Uint8Array;
  time: number;
  producer: { producerId: string; epoch: number; seq: number } | null;
}

const PRODUCERS = ["runner", "runner.g2"] as const;

const frame = fc.oneof(
  { weight: 8, arbitrary: fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 120 }) },
  { weight: 1, arbitrary: fc.constant("many" as const) },
  { weight: 1, arbitrary: fc.constant("big" as const) },
);

const step = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("append" as const), frame, control: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("send" as const),
      producer: fc.constantFrom(...PRODUCERS),
      // Relative to the producer's next seq: <0 resends, 0 the next, >0 a gap.
      shift: fc.integer({ min: -6, max: 2 }),
      count: fc.integer({ min: 1, max: 30 }),
      same: fc.boolean(),
      epoch: fc.integer({ min: -1, max: 0 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("claim" as const), producer: fc.constantFrom(...PRODUCERS) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("purge" as const) }) },
);

type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

function bodiesOf(shape: Uint8Array[] | "many" | "big", salt: number): Uint8Array[] {
  if (shape === "many") return Array.from({ length: BLOCK_MAX_ENTRIES + 7 }, (_, i) => new Uint8Array([i % 251, salt]));
  if (shape === "big") return Array.from({ length: 5 }, (_, i) => new Uint8Array(BLOCK_MAX_BYTES / 3).fill(i + salt));
  return shape;
}

/** The text a runner sends as event `seq`: `same` resends what is stored there. */
function runnerBody(producerId: string, seq: number, variant: number): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ producerId, seq, variant }));
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((byte, at) => byte === b[at]);
}

/** Every difference between the log's reads and the model's, described. */
function compare(log: LogCore, model: readonly ModelEntry[], probe: number): string[] {
  const found: string[] = [];
  const positions: LogPosition[] = [LOG_START];
  for (const entry of model) {
    const last = positions[positions.length - 1] as LogPosition;
    positions.push({ seq: last.seq + 1, pos: last.pos + entry.body.byteLength });
  }
  const tail = positions[positions.length - 1] as LogPosition;
  const state = log.mustState();
  if (state.tail.seq !== tail.seq || state.tail.pos !== tail.pos) found.push(`tail ${JSON.stringify(state.tail)}`);
  // Positions of every entry, and offsets of entry boundaries (and one that is not).
  // Every one in a short log; in a long one a sample, which still crosses every block.
  const stride = tail.seq > 600 ? 37 : 1;
  positions.forEach((position, seq) => {
    if (seq % stride !== 0 && seq < tail.seq - 2) return;
    const got = log.position(seq);
    if (got?.pos !== position.pos) found.push(`position ${seq}: ${JSON.stringify(got)}`);
  });
  if (log.position(tail.seq + 1) !== null) found.push("a position past the tail");
  const wrong = log.resolve({ kind: "at", seq: tail.seq, pos: tail.pos + 1 });
  if (wrong.kind !== "unknown" && tail.seq > 0) found.push(`an offset off a boundary resolved ${wrong.kind}`);
  // Pages from a handful of starts, under a few limits: the entries, their join and their ends.
  const limitsList = [
    { maxBytes: 1 + (probe % 700), maxEntries: 1 + (probe % 13) },
    { maxBytes: BLOCK_MAX_BYTES * 2, maxEntries: 100_000 },
    { maxBytes: 0, maxEntries: 3 },
  ];
  const starts = new Set([0, tail.seq, Math.floor(tail.seq / 2), probe % (tail.seq + 1), Math.max(0, tail.seq - 1)]);
  for (const start of starts) {
    for (const limits of limitsList) {
      const from = positions[start] as LogPosition;
      const want: number[] = [];
      let bytes = 0;
      for (let seq = start + 1; seq <= tail.seq && want.length < limits.maxEntries; seq++) {
        const size = (model[seq - 1] as ModelEntry).body.byteLength;
        if (want.length > 0 && bytes + size > limits.maxBytes) break;
        want.push(seq);
        bytes += size;
      }
      const page = log.read(from, limits);
      const ok =
        page.entries.length === want.length &&
        page.entries.every((entry, index) => {
          const seq = want[index] as number;
          const model_ = model[seq - 1] as ModelEntry;
          return (
            entry.seq === seq &&
            entry.end.pos === (positions[seq] as LogPosition).pos &&
            entry.time === model_.time &&
            same(entry.body, model_.body)
          );
        });
      const next = positions[start + want.length] as LogPosition;
      if (!ok || page.next.pos !== next.pos || page.next.seq !== next.seq || page.upToDate !== (next.seq === tail.seq))
        found.push(`read from ${start} ${JSON.stringify(limits)}`);
      const joins: [string, [string, string]][] = [
        ["", ["", ""]],
        [",", ["[", "]"]],
        ["<->", ["", ""]],
      ];
      for (const [separator, around] of joins) {
        const joined = log.readJoined(from, limits, separator, around);
        const parts = want.map((seq) => [...(model[seq - 1] as ModelEntry).body]);
        const bytes = (text: string) => [...new TextEncoder().encode(text)];
        const expected = [
          ...bytes(around[0]),
          ...parts.flatMap((part, index) => (index === 0 ? part : [...bytes(separator), ...part])),
          ...bytes(around[1]),
        ];
        if (
          joined.count !== want.length ||
          !same(joined.body, new Uint8Array(expected)) ||
          joined.next.seq !== next.seq
        )
          found.push(`joined from ${start} ${JSON.stringify(limits)} "${separator}"`);
      }
    }
  }
  // Every stamped entry is found by its producer seq, with its body.
  for (const [index, entry] of model.entries()) {
    if (!entry.producer || (index + probe) % (3 * stride) !== 0) continue;
    const got = log.entryForProducerSeq(entry.producer.producerId, entry.producer.seq);
    if (!got || got.seq !== index + 1 || !same(got.body, entry.body))
      found.push(`stamp ${entry.producer.producerId}/${entry.producer.seq} at ${index + 1}: ${got?.seq}`);
  }
  return found;
}

// With memo, as a run's log is used (reads remembered until a write through the core); without, as
// a stream's between operations; and remembering, as a stream's within one (LogCore.remembering).
describe.each(["memo", "none", "remembering"] as const)("the log in blocks (%s)", (mode) => {
  it("answers every read as a list of entries would, through frames, resends, conflicts and purges", async () => {
    const failures = await runInDurableObject(runObject(uniqueRunId("blocks")), (_instance, state) => {
      const sql = state.storage.sql;
      const log = new LogCore(sql, RUNNER_PRODUCER_RULES, { memo: mode === "memo" });
      const found: string[] = [];
      fc.assert(
        fc.property(fc.array(step, { minLength: 1, maxLength: 14 }), fc.nat(), (steps, probe) => {
          log.clear();
          log.init();
          const model: ModelEntry[] = [];
          if (mode === "remembering") {
            log.remembering(() => runSteps(steps, probe, model));
            // Nothing remembered outlives the step: an append by another core is seen at once.
            new LogCore(sql, RUNNER_PRODUCER_RULES).append([new Uint8Array([7])], 1);
            model.push({ body: new Uint8Array([7]), time: 1, producer: null });
            found.push(...compare(log, model, probe).map((f) => `after remembering: ${f}`));
          } else runSteps(steps, probe, model);
        }),
        { numRuns: 25, seed: 21 },
      );
      return found.slice(0, 20);

      function runSteps(steps: Step[], probe: number, model: ModelEntry[]): void {
        let producers = new Map<string, ProducerState>();
        let time = 1;
        for (const [index, action] of steps.entries()) {
          time += index % 2;
          if (action.kind === "purge") {
            log.clear();
            log.init();
            model.length = 0;
            producers = new Map();
          } else if (action.kind === "claim") {
            const next = log.producers.bump(action.producer, time);
            const current = producers.get(action.producer) ?? { epoch: 0, lastSeq: 0 };
            producers.set(action.producer, { epoch: current.epoch + 1, lastSeq: current.lastSeq });
            if (next.epoch !== current.epoch + 1) found.push(`claim epoch ${next.epoch}`);
          } else if (action.kind === "append") {
            const bodies = bodiesOf(action.frame, index);
            const entries = bodies.map((body, at) => ({
              body,
              time: time + (action.control ? 0 : at % 2),
              producer: null,
            }));
            log.appendEach(entries);
            model.push(...entries);
          } else {
            const current = producers.get(action.producer) ?? null;
            const epoch = (current?.epoch ?? 0) + action.epoch;
            const first = (current?.lastSeq ?? 0) + 1 + action.shift;
            if (first < 1) continue;
            const verdict = judgeProducer(
              current,
              { producerId: action.producer, epoch, seq: first },
              RUNNER_PRODUCER_RULES,
            );
            const stored = log.producers.judge({ producerId: action.producer, epoch, seq: first });
            if (JSON.stringify(stored) !== JSON.stringify(verdict)) found.push(`verdict ${JSON.stringify(stored)}`);
            if (verdict.kind === "duplicate") {
              // A resend: its content is compared with what is stored, as a run does.
              const kept = log.entryForProducerSeq(action.producer, first);
              const want = model.find(
                (entry) => entry.producer?.producerId === action.producer && entry.producer.seq === first,
              );
              const resent = action.same && want ? want.body : runnerBody(action.producer, first, 1);
              if (!kept || !want || !same(kept.body, want.body)) found.push(`resend ${first} not found`);
              else if (same(kept.body, resent) !== (action.same || same(want.body, resent)))
                found.push(`resend ${first} judged wrongly`);
              continue;
            }
            if (verdict.kind !== "accepted") continue;
            const entries = Array.from({ length: action.count }, (_, at) => ({
              body: runnerBody(action.producer, first + at, 0),
              time,
              producer: { producerId: action.producer, epoch, seq: first + at },
            }));
            log.appendEach(entries);
            const lastSeq = first + action.count - 1;
            log.producers.record(action.producer, { epoch, lastSeq }, time);
            producers.set(action.producer, { epoch, lastSeq });
            model.push(...entries);
          }
          found.push(...compare(log, model, probe + index));
        }
      }
    });
    expect(failures).toEqual([]);
  }, 180_000);
});
