import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LogCore } from "../../src/log/log.ts";
import { RUNNER_PRODUCER_RULES } from "../../src/log/producers.ts";
import { runObject, uniqueRunId } from "./helpers.ts";

/**
 * Finding a resent runner event without an index on the producer stamp: by bisecting the log's
 * seqs. Runner generations write under their own producer ids and control events under none,
 * so one producer's entries are interleaved with others'.
 */

const WRITERS = ["runner", "runner.g2", null] as const;
type Writer = (typeof WRITERS)[number];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Writes one entry per writer, in order, each runner producer numbering its own from 1. */
function writeLog(log: LogCore, writers: readonly Writer[]): Map<string, Map<number, number>> {
  const stored = new Map<string, Map<number, number>>();
  let seq = 0;
  for (const writer of writers) {
    seq += 1;
    const stamp = writer === null ? null : (stored.get(writer)?.size ?? 0) + 1;
    log.appendEach([
      {
        body: encoder.encode(JSON.stringify({ seq, writer, stamp })),
        time: seq,
        producer: writer === null || stamp === null ? null : { producerId: writer, epoch: 1, seq: stamp },
      },
    ]);
    if (writer !== null && stamp !== null) {
      const own = stored.get(writer) ?? new Map<number, number>();
      own.set(stamp, seq);
      stored.set(writer, own);
      log.producers.record(writer, { epoch: 1, lastSeq: stamp }, seq);
    }
  }
  return stored;
}

/** Runs `body` on a fresh, empty log core in a run object's SQLite. */
async function withLog<T>(body: (log: LogCore, sql: SqlStorage) => T): Promise<T> {
  return runInDurableObject(runObject(uniqueRunId("log")), (_instance, state) => {
    const sql = state.storage.sql;
    const log = new LogCore(sql, RUNNER_PRODUCER_RULES);
    log.clear();
    log.init();
    return body(log, sql);
  });
}

describe("resent runner events are found by seq bisection, per producer", () => {
  it("every stored (producer, seq) is found at its log seq, under any interleaving of producers", async () => {
    const mismatches = await withLog((log, sql) => {
      const found: string[] = [];
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...WRITERS), { maxLength: 120 }), (writers) => {
          log.clear();
          log.init();
          sql.exec("DELETE FROM log_producers");
          const stored = writeLog(log, writers);
          for (const [producer, stamps] of stored) {
            for (const [stamp, seq] of stamps) {
              const entry = log.entryForProducerSeq(producer, stamp);
              const body = entry ? JSON.parse(decoder.decode(entry.body)) : null;
              if (entry?.seq !== seq || body?.writer !== producer || body?.stamp !== stamp) {
                found.push(`${writers.join(",")}: ${producer} ${stamp} → ${entry?.seq ?? "none"}, want ${seq}`);
              }
            }
            // Past the producer's last seq, and before its first, there is nothing.
            if (log.entryForProducerSeq(producer, stamps.size + 1) !== null) found.push(`${producer} past its end`);
            if (log.entryForProducerSeq(producer, 0) !== null) found.push(`${producer} seq 0`);
          }
          for (const writer of WRITERS) {
            if (writer !== null && !stored.has(writer) && log.entryForProducerSeq(writer, 1) !== null) {
              found.push(`${writer} never wrote`);
            }
          }
        }),
        { numRuns: 150, seed: 9 },
      );
      return found;
    });
    expect(mismatches).toEqual([]);
  });

  it("a lookup of the current runner reads a handful of rows, an earlier generation's reads past the later one once", async () => {
    const reads = await withLog((log, sql) => {
      // 2,000 events of generation 1, then generation 2 with a control event every tenth entry.
      writeLog(log, [
        ...Array.from({ length: 2_000 }, (): Writer => "runner"),
        ...Array.from({ length: 3_000 }, (_, i): Writer => (i % 10 === 9 ? null : "runner.g2")),
      ]);
      const metered = meteredSql(sql);
      const lookups = new LogCore(metered.sql, RUNNER_PRODUCER_RULES);
      return (
        [
          ["runner.g2", 2_700],
          ["runner.g2", 2_650],
          ["runner.g2", 7],
          ["runner", 1_999],
          ["runner", 7],
        ] as const
      ).map(([producer, stamp]) => {
        const before = metered.rowsRead();
        const entry = lookups.entryForProducerSeq(producer, stamp);
        const body = JSON.parse(decoder.decode(entry?.body ?? encoder.encode("null")));
        return { found: body?.stamp === stamp && body?.writer === producer, rowsRead: metered.rowsRead() - before };
      });
    });
    expect(reads.map((r) => r.found)).toEqual([true, true, true, true, true]);
    // The current producer, recent or far back: its state row and the last block (which may hold
    // its newest stamps, src/log/producers.ts), the tail (the last block again) and a few probes.
    for (const read of reads.slice(0, 3)) expect(read.rowsRead).toBeLessThanOrEqual(12);
    // An earlier generation: the 3,000 entries written above it are read once on the way down.
    for (const read of reads.slice(3)) expect(read.rowsRead).toBeLessThanOrEqual(3_010);
  });
});

/** `sql` counting the rows its statements read (each cursor's billed `rowsRead`). */
function meteredSql(sql: SqlStorage): { sql: SqlStorage; rowsRead: () => number } {
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  const exec = (query: string, ...bindings: unknown[]) => {
    const cursor = sql.exec(query, ...bindings);
    cursors.push(cursor);
    return cursor;
  };
  return {
    sql: new Proxy(sql, { get: (target, key) => (key === "exec" ? exec : Reflect.get(target, key)) }),
    rowsRead: () => cursors.reduce((sum, cursor) => sum + cursor.rowsRead, 0),
  };
}
