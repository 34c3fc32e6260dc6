import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { schemaVersion } from "../../src/objects/migrations.ts";
import { RUN_MIGRATIONS } from "../../src/objects/run-schema.ts";
import { STREAM_MIGRATIONS } from "../../src/objects/stream-schema.ts";
import { allEvents, call, createRun, json, runObject, runnerTranscript } from "./helpers.ts";
import { dumpTables, entryRows, revertBlocksMigration, type StoredEntry, storedEntries } from "./log-rows.ts";
import { agentEvent, claim } from "./sockets.ts";

/**
 * The block migration on objects of the layout before it: a run and a stream written by the
 * current code paths, their log turned back into one row per entry exactly as the code before
 * blocks stored it, then woken. Every row of every table, every entry and every read must come
 * through byte for byte, and the log must go on judging resends as before.
 */

const BLOCKS_RUN_VERSION = RUN_MIGRATIONS.findIndex((m) => m.name === "log entries stored in blocks") + 1;
const BLOCKS_STREAM_VERSION = STREAM_MIGRATIONS.findIndex((m) => m.name === "log entries stored in blocks") + 1;

type Stub = Parameters<typeof evictDurableObject>[0];

/** Reverts `stub`'s log to the old layout; returns what it held, as stored both ways. */
async function revert(stub: Stub, version: number) {
  return runInDurableObject(stub, (_instance, state) => {
    const sql = state.storage.sql;
    const before = { tables: dumpTables(sql), entries: entryRows(storedEntries(sql)) };
    revertBlocksMigration(sql, version);
    const old = entryRows(sql.exec<StoredEntry>("SELECT * FROM log_entries ORDER BY seq").toArray());
    return { before, old };
  });
}

/** Wakes `stub` (running its migrations) and reads what it holds now. */
async function wake(stub: Stub) {
  await evictDurableObject(stub, { webSockets: "close" });
  return runInDurableObject(stub, (_instance, state) => {
    const sql = state.storage.sql;
    return {
      version: schemaVersion(sql),
      oldTable: sql.exec("SELECT name FROM sqlite_master WHERE name = 'log_entries'").toArray().length,
      tables: dumpTables(sql),
      entries: entryRows(storedEntries(sql)),
      blocks: sql.exec<{ n: number }>("SELECT count(*) AS n FROM log_blocks").one().n,
    };
  });
}

describe("the block migration", () => {
  it("moves a run's events into blocks on wake, every event, command, timer and producer row kept", async () => {
    const created = await createRun({ timeouts: { approvalMs: 60_000, heartbeatMs: 600_000 } });
    const runId = created.run.id;
    const first = await claim(runId, created.runnerToken, "first");
    const post = (body: unknown) => call(`/v1/runs/${runId}/commands`, { method: "POST", json: body });
    await json(await post({ commandId: "delivered", type: "input", text: "a" }), 201);
    await first.runner.next("command");
    const frames = [1, 7, 120, 3];
    let sourceSeq = 0;
    for (const size of frames) {
      const events = Array.from({ length: size }, () => {
        sourceSeq += 1;
        return agentEvent(sourceSeq, "TEXT_MESSAGE_CONTENT", `é ${sourceSeq} ${"x".repeat(sourceSeq % 50)}`);
      });
      first.runner.send({ type: "events", epoch: first.epoch, events });
      await first.runner.next("ack");
    }
    await json(await post({ commandId: "queued", type: "interrupt" }), 201);
    const second = await claim(runId, created.runnerToken, "second");
    second.runner.send({ type: "events", epoch: second.epoch, events: [agentEvent(sourceSeq + 1)] });
    await second.runner.next("ack");
    const events = await allEvents(runId);

    const { before, old } = await revert(runObject(runId), BLOCKS_RUN_VERSION);
    expect(old).toEqual(before.entries);
    expect(old.length).toBe(events.length);
    const after = await wake(runObject(runId));
    expect(after.version).toBe(RUN_MIGRATIONS.length);
    expect(after.oldTable).toBe(0);
    expect(after.entries).toEqual(before.entries);
    expect(after.tables).toEqual(before.tables);
    // Consecutive entries packed: far fewer rows than entries.
    expect(after.blocks).toBeLessThan(5);
    expect(await allEvents(runId)).toEqual(events);

    // Resends of migrated events are judged as before: a duplicate, the next one, then a conflict.
    const third = await claim(runId, created.runnerToken, "third");
    const resent = events.find((event) => event.sourceSeq === 60);
    third.runner.send({ type: "events", epoch: third.epoch, events: [{ ...agentEvent(60), data: resent?.data }] });
    expect(await third.runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: sourceSeq + 1 });
    third.runner.send({ type: "events", epoch: third.epoch, events: [agentEvent(sourceSeq + 2)] });
    expect(await third.runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: sourceSeq + 2 });
    third.runner.send({
      type: "events",
      epoch: third.epoch,
      events: [agentEvent(60, "TEXT_MESSAGE_CONTENT", "other")],
    });
    expect(await third.runner.next("conflict")).toEqual({ type: "conflict", sourceSeq: 60 });
    const transcript = await runnerTranscript(runId);
    expect(transcript.map(([seq]) => seq)).toEqual(Array.from({ length: sourceSeq + 2 }, (_, i) => i + 1));
  });

  it("moves a stream's entries into blocks on wake, producers, batches and reads kept", async () => {
    const path = `blocks-migration-${crypto.randomUUID()}`;
    const url = `/v1/stream/${path}`;
    const put = await call(url, { method: "PUT", headers: { "content-type": "application/json" } });
    expect(put.status).toBe(201);
    const producer = (seq: number) => ({
      "content-type": "application/json",
      "producer-id": "p1",
      "producer-epoch": "0",
      "producer-seq": String(seq),
    });
    const batches = [[{ a: 1 }], [{ b: "é" }, { c: [1, 2] }, 3], Array.from({ length: 50 }, (_, i) => ({ i }))];
    for (const [seq, batch] of batches.entries()) {
      const res = await call(url, { method: "POST", headers: producer(seq), body: JSON.stringify(batch) });
      expect(res.status).toBeLessThan(300);
    }
    await call(url, { method: "POST", headers: { "content-type": "application/json" }, body: '"plain"' });
    const read = async (offset: string) => {
      const res = await call(`${url}?offset=${offset}`);
      return { status: res.status, next: res.headers.get("stream-next-offset"), body: await res.text() };
    };
    const whole = await read("-1");
    const middle = await read(encodeURIComponent(middleOffset(whole.next ?? "", 2)));
    const stub = env.STREAMS.get(env.STREAMS.idFromName(JSON.stringify(["tenant-a", path])));

    const { before, old } = await revert(stub, BLOCKS_STREAM_VERSION);
    expect(old).toEqual(before.entries);
    expect(old.length).toBe(55);
    const after = await wake(stub);
    expect(after.version).toBe(STREAM_MIGRATIONS.length);
    expect(after.oldTable).toBe(0);
    expect(after.entries).toEqual(before.entries);
    expect(after.tables).toEqual(before.tables);
    expect(await read("-1")).toEqual(whole);
    expect(await read(encodeURIComponent(middleOffset(whole.next ?? "", 2)))).toEqual(middle);
    // The producer goes on: a retry is a duplicate (nothing stored), the next seq appends.
    const retry = await call(url, { method: "POST", headers: producer(1), body: JSON.stringify(batches[1]) });
    expect(retry.status).toBe(204);
    const next = await call(url, { method: "POST", headers: producer(3), body: '{"z":1}' });
    expect(next.status).toBeLessThan(300);
    const final = JSON.parse((await read("-1")).body) as unknown[];
    expect(final).toEqual([...batches.flat(), "plain", { z: 1 }]);
  });
});

/** The offset after entry `seq`, worked out from a tail token (`seq_pos`) of a log read whole. */
function middleOffset(_tail: string, seq: number): string {
  // Entries 1 and 2 are `{"a":1}` (7 bytes) and `{"b":"é"}` (10 bytes).
  return `${String(seq).padStart(16, "0")}_${String(17).padStart(16, "0")}`;
}
