import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  allEvents,
  call,
  createRun,
  DAY,
  expectStallAtLease,
  getRun,
  json,
  runObject,
  shiftLogTimes,
  timerDue,
  travel,
} from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

const LONG = 40 * DAY;
const FRAME = 100;

/** What the object's storage has written since `meter` was fitted: rows by each cursor, and alarms set. */
interface Meter {
  cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[];
  alarmsSet: number;
}

/**
 * Fits the run's live object with a meter: every SQL cursor it opens is kept, so its own
 * `rowsWritten` (what Cloudflare bills) can be summed, and every `setAlarm` (billed as a row) is
 * counted. The object keeps its storage for its life, so the meter lasts until it is evicted.
 */
async function fitMeter(runId: string): Promise<Meter> {
  const meter: Meter = { cursors: [], alarmsSet: 0 };
  await runInDurableObject(runObject(runId), (_instance, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    sql.exec = ((query: string, ...bindings: unknown[]) => {
      const cursor = exec(query, ...bindings);
      meter.cursors.push(cursor);
      return cursor;
    }) as typeof sql.exec;
    const setAlarm = state.storage.setAlarm.bind(state.storage);
    state.storage.setAlarm = (...args: Parameters<typeof setAlarm>) => {
      meter.alarmsSet += 1;
      return setAlarm(...args);
    };
  });
  return meter;
}

/** Rows written (the cursors' own count, plus one per alarm set) since the last reading. */
async function readMeter(runId: string, meter: Meter): Promise<{ rows: number; alarms: number }> {
  return runInDurableObject(runObject(runId), () => {
    const rows = meter.cursors.reduce((total, cursor) => total + cursor.rowsWritten, 0);
    const reading = { rows, alarms: meter.alarmsSet };
    meter.cursors = [];
    meter.alarmsSet = 0;
    return reading;
  });
}

/**
 * Time passing for the run, as travel() moves it, but with the alarm left at the earliest
 * deadline, where the object keeps it (travel() parks it, which the next operation would put
 * back: a write of its own).
 */
async function pass(runId: string, ms: number): Promise<void> {
  await runInDurableObject(runObject(runId), async (_instance, state) => {
    state.storage.sql.exec("UPDATE timers SET due_at = due_at - ?", ms);
    shiftLogTimes(state.storage.sql, ms);
    const earliest = state.storage.sql.exec<{ due: number }>("SELECT MIN(due_at) AS due FROM timers").one().due;
    await state.storage.setAlarm(earliest);
  });
}

function frameOf(first: number): ReturnType<typeof agentEvent>[] {
  return Array.from({ length: FRAME }, (_, k) => agentEvent(first + k));
}

async function runnerRow(runId: string): Promise<{ epoch: number; last_seq: number } | undefined> {
  return runInDurableObject(
    runObject(runId),
    (_instance, state) =>
      state.storage.sql
        .exec<{ epoch: number; last_seq: number }>(
          "SELECT epoch, last_seq FROM log_producers WHERE producer_id = 'runner'",
        )
        .toArray()[0],
  );
}

describe("a frame of events writes its block and nothing else", () => {
  it("rows written per 100-event frame: one, and no alarm set", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 60_000, idleMs: 600_000 } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    const meter = await fitMeter(run.id);
    const written: { rows: number; alarms: number }[] = [];
    for (let f = 0; f < 6; f++) {
      // Time goes on between frames, as it does for a real runner: nothing is moved for it.
      await pass(run.id, 1_000);
      await readMeter(run.id, meter);
      runner.send({ type: "events", epoch, events: frameOf(f * FRAME + 1) });
      expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: (f + 1) * FRAME });
      written.push(await readMeter(run.id, meter));
    }
    // The frame's block; the log's tail, the runner's last sourceSeq, the lease and the idle
    // deadline are all read from it (src/log/log.ts, src/log/producers.ts, src/run/alarm.ts).
    expect(written).toEqual(Array.from({ length: 6 }, () => ({ rows: 1, alarms: 0 })));
    expect((await allEvents(run.id)).filter((e) => e.source === "runner").map((e) => e.sourceSeq)).toEqual(
      Array.from({ length: 6 * FRAME }, (_, i) => i + 1),
    );
    runner.close();
  });

  it("a control event after a frame settles the runner's row once; resends are still judged exactly", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 60_000, idleMs: 600_000 } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: frameOf(1) });
    await runner.next("ack");
    // The claim stored the row; the frame's stamps say the rest while its block is the last.
    expect(await runnerRow(run.id)).toEqual({ epoch, last_seq: 0 });
    const posted = { commandId: "c1", type: "input", text: "a" };
    await json(await call(`/v1/runs/${run.id}/commands`, { method: "POST", json: posted }), 201);
    expect(await runner.next("command")).toMatchObject({ commandId: "c1", kind: "input" });
    // The command's control event went after the frame: the row was brought up to its stamps first.
    expect(await runnerRow(run.id)).toEqual({ epoch, last_seq: FRAME });
    const meter = await fitMeter(run.id);
    runner.send({ type: "events", epoch, events: frameOf(FRAME + 1) });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 2 * FRAME });
    expect(await readMeter(run.id, meter)).toEqual({ rows: 1, alarms: 0 });
    // A resend from either frame is a duplicate; a changed one is a conflict.
    runner.send({ type: "events", epoch, events: [agentEvent(FRAME), agentEvent(2 * FRAME)] });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 2 * FRAME });
    runner.send({ type: "events", epoch, events: [agentEvent(FRAME, "TEXT_MESSAGE_CONTENT", "changed")] });
    expect(await runner.next("conflict")).toEqual({ type: "conflict", sourceSeq: FRAME });
    runner.send({ type: "events", epoch, events: [agentEvent(2 * FRAME + 2)] });
    expect(await runner.next("gap")).toEqual({ type: "gap", expected: 2 * FRAME + 1 });
    runner.close();
  });
});

describe("the idle deadline, judged against the last runner event when it falls due", () => {
  it("an event after the claim puts the timeout idleMs after the event, exactly, across a restart", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { idleMs: 10_000, heartbeatMs: LONG } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    const claimedIdle = await timerDue(run.id, "idle");
    await travel(run.id, 4_000);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    await runner.next("ack");
    const eventAt = (await allEvents(run.id)).at(-1);
    expect(eventAt).toMatchObject({ source: "runner", sourceSeq: 1 });
    // The frame left the stored deadline where the claim put it (4 s ago, on the travelled scale).
    expect(await timerDue(run.id, "idle")).toBe(claimedIdle - 4_000);

    await evictDurableObject(runObject(run.id), { webSockets: "close" });
    // At the claim's deadline the alarm finds the event 6 s old: it stores the exact deadline.
    await travel(run.id, 6_000);
    expect(await runDurableObjectAlarm(runObject(run.id))).toBe(true);
    expect((await getRun(run.id)).status).toBe("running");
    const due = await timerDue(run.id, "idle");
    expect(due).toBeGreaterThan(Date.now() + 3_000);
    expect(due).toBeLessThanOrEqual(Date.now() + 4_000);

    await evictDurableObject(runObject(run.id), { webSockets: "close" });
    await travel(run.id, due - Date.now() - 1_000);
    expect(await runDurableObjectAlarm(runObject(run.id))).toBe(true);
    expect((await getRun(run.id)).status).toBe("running");
    await travel(run.id, 1_000);
    expect(await runDurableObjectAlarm(runObject(run.id))).toBe(true);
    expect(await getRun(run.id)).toMatchObject({
      status: "timed_out",
      outcome: { error: { code: "idle_timeout", message: "no runner event for 10000 ms" } },
    });
  });

  it("with no event since the claim it times out at the claim's deadline", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { idleMs: 10_000, heartbeatMs: LONG } });
    const first = await claim(run.id, runnerToken, "first");
    first.runner.send({ type: "events", epoch: first.epoch, events: [agentEvent(1)] });
    await first.runner.next("ack");
    // A new claim 5 s later: the earlier claim's event does not count for this one.
    await travel(run.id, 5_000);
    await claim(run.id, runnerToken, "second");
    await travel(run.id, 9_000);
    expect(await runDurableObjectAlarm(runObject(run.id))).toBe(true);
    expect((await getRun(run.id)).status).toBe("running");
    await travel(run.id, 1_000);
    expect(await runDurableObjectAlarm(runObject(run.id))).toBe(true);
    expect(await getRun(run.id)).toMatchObject({ status: "timed_out", outcome: { error: { code: "idle_timeout" } } });
  });
});

describe("the lease after a batch, judged against the last runner event when it falls due", () => {
  it("a runner that stops after a batch stalls exactly a period after it, across a restart", async () => {
    const { run, runnerToken } = await createRun({
      timeouts: { heartbeatMs: 10_000, takeoverMs: LONG, idleMs: LONG },
    });
    const { runner, epoch } = await claim(run.id, runnerToken);
    await travel(run.id, 4_000);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    await runner.next("ack");
    await evictDurableObject(runObject(run.id), { webSockets: "close" });
    await travel(run.id, 6_000);
    expect(await runDurableObjectAlarm(runObject(run.id))).toBe(true);
    expect((await getRun(run.id)).status).toBe("running");
    const due = await timerDue(run.id, "lease");
    expect(due).toBeGreaterThan(Date.now() + 3_000);
    expect(due).toBeLessThanOrEqual(Date.now() + 4_000);
    await expectStallAtLease(run.id, due, epoch);
  });
});
