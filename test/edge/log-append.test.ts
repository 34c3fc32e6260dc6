import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LogCore, type ReadLimits } from "../../src/log/log.ts";
import { LOG_START, type LogPosition } from "../../src/log/offsets.ts";
import { LOG_READ_LIMITS } from "../../src/log/reader.ts";
import { RUNNER_PRODUCER_RULES } from "../../src/log/producers.ts";
import { runObject, uniqueRunId } from "./helpers.ts";
import { type StoredEntry, storedEntries } from "./log-rows.ts";

/**
 * A run's events are appended a frame at a time, in one statement, from their JSON text; reads
 * come back as one buffer joined inside SQLite.
 */

const encoder = new TextEncoder();

type Stored = StoredEntry;

const entry = fc.record({
  // Every kind of string JSON.stringify can produce: any UTF-16 (lone surrogates come out escaped).
  value: fc.jsonValue({ stringUnit: "binary", maxDepth: 3 }),
  time: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  producer: fc.option(fc.record({ producerId: fc.string({ unit: "binary" }), epoch: fc.nat(), seq: fc.nat() })),
});

describe("appending text entries in one statement", () => {
  it("stores each text's exact UTF-8 bytes, its end position, time and producer stamp", async () => {
    const failures = await runInDurableObject(runObject(uniqueRunId("append")), (_instance, state) => {
      const sql = state.storage.sql;
      const log = new LogCore(sql, RUNNER_PRODUCER_RULES);
      const found: string[] = [];
      fc.assert(
        fc.property(fc.array(fc.array(entry, { minLength: 0, maxLength: 40 }), { maxLength: 4 }), (frames) => {
          log.clear();
          log.init();
          const expected: Omit<Stored, "body">[] = [];
          const bodies: Uint8Array[] = [];
          let pos = 0;
          for (const frame of frames) {
            const entries = frame.map(({ value, time, producer }) => ({ text: JSON.stringify(value), time, producer }));
            const tail = log.appendTexts(entries);
            for (const { text, time, producer } of entries) {
              const bytes = encoder.encode(text);
              pos += bytes.byteLength;
              bodies.push(bytes);
              expected.push({
                seq: expected.length + 1,
                end_pos: pos,
                time,
                producer_id: producer?.producerId ?? null,
                producer_epoch: producer?.epoch ?? null,
                producer_seq: producer?.seq ?? null,
              });
            }
            if (tail.seq !== expected.length || tail.pos !== pos) found.push(`tail ${JSON.stringify(tail)}`);
          }
          const rows = storedEntries(sql);
          const actual = rows.map(({ body: _body, ...rest }) => rest);
          if (JSON.stringify(actual) !== JSON.stringify(expected)) found.push(`rows ${JSON.stringify(actual)}`);
          rows.forEach((row, index) => {
            const want = bodies[index] as Uint8Array;
            const got = new Uint8Array(row.body);
            if (got.byteLength !== want.byteLength || got.some((byte, at) => byte !== want[at])) {
              found.push(`body of seq ${row.seq}: ${new TextDecoder().decode(got)}`);
            }
          });
          expect(log.mustState().tail).toEqual({ seq: expected.length, pos });
        }),
        { numRuns: 100, seed: 9 },
      );
      return found;
    });
    expect(failures).toEqual([]);
  });
});

/** The page `readJoined` must return after entry `fromSeq` of `bodies`, worked out here. */
function expectedPage(bodies: readonly Uint8Array[], fromSeq: number, limits: ReadLimits, separator: string) {
  const taken: Uint8Array[] = [];
  let bytes = 0;
  for (const body of bodies.slice(fromSeq)) {
    if (taken.length === limits.maxEntries || (taken.length > 0 && bytes + body.byteLength > limits.maxBytes)) break;
    taken.push(body);
    bytes += body.byteLength;
  }
  const gap = [...encoder.encode(separator)];
  const body = taken.flatMap((entry, index) => (index === 0 ? [...entry] : [...gap, ...entry]));
  const seq = fromSeq + taken.length;
  const pos = bodies.slice(0, seq).reduce((sum, entry) => sum + entry.byteLength, 0);
  return { body, count: taken.length, next: { seq, pos }, upToDate: seq === bodies.length };
}

function joinedPage(log: LogCore, from: LogPosition, limits: ReadLimits, separator: string) {
  const page = log.readJoined(from, limits, separator);
  return { ...page, body: [...page.body] };
}

describe("appending a batch larger than one SQLite string", () => {
  it("splits it into statements under the bound and stores every entry", async () => {
    const result = await runInDurableObject(runObject(uniqueRunId("append")), (_instance, state) => {
      const log = new LogCore(state.storage.sql, RUNNER_PRODUCER_RULES);
      log.clear();
      log.init();
      // 500 texts of 4,000 quotes and a non-ASCII tail: 4 MB once escaped twice, if sent at once.
      const texts = Array.from({ length: 500 }, (_, i) => JSON.stringify(`${'"'.repeat(2_000)}é${i}`));
      const tail = log.appendTexts(texts.map((text, i) => ({ text, time: i, producer: null })));
      const stored = storedEntries(state.storage.sql).map((row) => new TextDecoder().decode(row.body));
      const bytes = texts.reduce((sum, text) => sum + encoder.encode(text).byteLength, 0);
      return { tail, same: JSON.stringify(stored) === JSON.stringify(texts), bytes };
    });
    expect(result.same).toBe(true);
    expect(result.tail).toEqual({ seq: 500, pos: result.bytes });
  });
});

describe("appending one entry that escapes past the bound on its own", () => {
  it("stores it alone, byte for byte, with exact positions, and its neighbours intact", async () => {
    const result = await runInDurableObject(runObject(uniqueRunId("append")), (_instance, state) => {
      const log = new LogCore(state.storage.sql, RUNNER_PRODUCER_RULES);
      log.clear();
      log.init();
      // Quotes and backslashes double when escaped: this ~1.4 MB JSON text is ~2.9 M chars escaped
      // again, past SQLite's string bound; ~300 kB of them lands just under our bound.
      const huge = JSON.stringify(`${'"\\'.repeat(360_000)}é`);
      const under = `${'"\\'.repeat(99_000)}é`;
      const texts = ["{}", huge, '{"a":1}', under, huge, "[]"];
      const producer = { producerId: "runner", epoch: 1, seq: 7 };
      const tail = log.appendTexts(texts.map((text, i) => ({ text, time: i, producer: i === 1 ? producer : null })));
      const stored = storedEntries(state.storage.sql);
      let pos = 0;
      const expected = texts.map((text, i) => {
        pos += encoder.encode(text).byteLength;
        return { seq: i + 1, end_pos: pos, time: i, producer_id: i === 1 ? "runner" : null };
      });
      return {
        tail,
        pos,
        rows: stored.map((row) => ({
          seq: row.seq,
          end_pos: row.end_pos,
          time: row.time,
          producer_id: row.producer_id,
        })),
        same: stored.map((row) => new TextDecoder().decode(row.body)).every((text, i) => text === texts[i]),
        count: stored.length,
        expected,
      };
    });
    expect(result.count).toBe(6);
    expect(result.same).toBe(true);
    expect(result.rows).toEqual(result.expected);
    expect(result.tail).toEqual({ seq: 6, pos: result.pos });
  });
});

describe("pages joined by SQLite", () => {
  it("match the page worked out entry by entry, for any bytes, start and limits", async () => {
    const failures = await runInDurableObject(runObject(uniqueRunId("pages")), (_instance, state) => {
      const log = new LogCore(state.storage.sql, RUNNER_PRODUCER_RULES);
      const found: string[] = [];
      fc.assert(
        fc.property(
          fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { maxLength: 30 }),
          fc.nat(),
          fc.integer({ min: 1, max: 400 }),
          fc.integer({ min: 1, max: 40 }),
          fc.constantFrom(",", ""),
          (bodies, start, maxBytes, maxEntries, separator) => {
            log.clear();
            log.init();
            log.append(bodies, 1);
            const fromSeq = start % (bodies.length + 1);
            const from = log.position(fromSeq) ?? LOG_START;
            const limits = { maxBytes, maxEntries };
            const want = expectedPage(bodies, fromSeq, limits, separator);
            const got = joinedPage(log, from, limits, separator);
            if (JSON.stringify(got) !== JSON.stringify(want)) found.push(JSON.stringify({ bodies, from, limits, got }));
          },
        ),
        { numRuns: 300, seed: 9 },
      );
      return found;
    });
    expect(failures).toEqual([]);
  });

  it("a page larger than one SQLite string comes back whole, in order, up to the byte and entry limits", async () => {
    const results = await runInDurableObject(runObject(uniqueRunId("pages")), (_instance, state) => {
      const log = new LogCore(state.storage.sql, RUNNER_PRODUCER_RULES);
      log.clear();
      log.init();
      // 900 KiB entries, each filled with its own byte (0 included), then 100,001 one-byte entries.
      log.append(
        Array.from({ length: 6 }, (_, i) => new Uint8Array(900 * 1024).fill(i * 51)),
        1,
      );
      const small = Array.from({ length: 100_001 }, (_, i) => new Uint8Array([i % 256]));
      log.append(small, 2);
      const big = log.readJoined(LOG_START, LOG_READ_LIMITS, "");
      const firstOfEach = Array.from({ length: big.count }, (_, i) => big.body[i * 900 * 1024]);
      const afterBig = log.position(6) ?? LOG_START;
      const page = log.readJoined(afterBig, LOG_READ_LIMITS, ",");
      const want = expectedPage(small, 0, LOG_READ_LIMITS, ",");
      return {
        big: { count: big.count, bytes: big.body.byteLength, firstOfEach, next: big.next },
        small: { count: page.count, same: JSON.stringify([...page.body]) === JSON.stringify(want.body) },
      };
    });
    // 4 MiB holds four whole 900 KiB entries (the fifth would pass it), in four parts of one each.
    expect(results.big).toEqual({
      count: 4,
      bytes: 4 * 900 * 1024,
      firstOfEach: [0, 51, 102, 153],
      next: { seq: 4, pos: 4 * 900 * 1024 },
    });
    // 100,000 entries at most, their separators between them, whatever the parts.
    expect(results.small).toEqual({ count: 100_000, same: true });
  });
});

describe("clearing a log", () => {
  it("drops its entries for a few rows written, keeps the table's definition, and the log starts again", async () => {
    const result = await runInDurableObject(runObject(uniqueRunId("clear")), (_instance, state) => {
      const sql = state.storage.sql;
      const log = new LogCore(sql, RUNNER_PRODUCER_RULES);
      log.clear();
      log.init();
      log.appendTexts(Array.from({ length: 5_000 }, (_, i) => ({ text: `{"n":${i}}`, time: i, producer: null })));
      const schema = () =>
        sql.exec("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'log_blocks' ORDER BY name").toArray();
      const before = schema();
      const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
      const metered = new Proxy(sql, {
        get: (target, key) =>
          key === "exec"
            ? (query: string, ...bindings: unknown[]) => {
                const cursor = target.exec(query, ...bindings);
                cursors.push(cursor);
                return cursor;
              }
            : Reflect.get(target, key),
      });
      new LogCore(metered, RUNNER_PRODUCER_RULES).clear();
      const rowsWritten = cursors.reduce((sum, cursor) => sum + cursor.rowsWritten, 0);
      const after = { schema: schema(), entries: sql.exec("SELECT count(*) AS n FROM log_blocks").one().n };
      log.init();
      const tail = log.appendTexts([{ text: "{}", time: 1, producer: null }]);
      return { before, after, rowsWritten, tail };
    });
    expect(result.after).toEqual({ schema: result.before, entries: 0 });
    expect(result.rowsWritten).toBeLessThan(20);
    expect(result.tail).toEqual({ seq: 1, pos: 2 });
  });
});
