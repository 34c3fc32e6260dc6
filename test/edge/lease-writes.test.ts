import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createRun, expectStallAtLease, getRun, runObject, timerDue, travel } from "./helpers.ts";
import { claim } from "./sockets.ts";

const HEARTBEAT_MS = 60_000;
/** The bridge heartbeats about every third of a lease period; 7 s is off every boundary below. */
const BETWEEN_HEARTBEATS = 7_000;

/** Rows the object's SQLite connection has inserted, updated or deleted since it opened. */
async function rowsChanged(runId: string): Promise<number> {
  return runInDurableObject(runObject(runId), (_instance, state) =>
    Number(state.storage.sql.exec<{ n: number }>("SELECT total_changes() AS n").one().n),
  );
}

/**
 * Moves the run `ms` into the future as time passing would: every deadline pulled in, and the
 * alarm at the earliest of them, where the object keeps it (travel() parks it, which the next
 * operation would count as a write of its own).
 */
async function pass(runId: string, ms: number): Promise<void> {
  await runInDurableObject(runObject(runId), async (_instance, state) => {
    state.storage.sql.exec("UPDATE timers SET due_at = due_at - ?", ms);
    const earliest = state.storage.sql.exec<{ due: number }>("SELECT MIN(due_at) AS due FROM timers").one().due;
    await state.storage.setAlarm(earliest);
  });
}

describe("heartbeats write the lease once per lease period, not once each", () => {
  it("rows written per heartbeat: two on the heartbeat that passes the stored lease, none on the others", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: HEARTBEAT_MS } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    const written: number[] = [];
    for (let i = 0; i < 18; i++) {
      await pass(run.id, BETWEEN_HEARTBEATS);
      const before = await rowsChanged(run.id);
      runner.send({ type: "heartbeat", epoch });
      await runner.settle();
      written.push((await rowsChanged(run.id)) - before);
    }
    // The first heartbeat finds the claim's lease 7 s old and stores one a period ahead of its
    // own (the lease row, and the alarm, which the SQLite store keeps as a row too); that lasts
    // until the ninth heartbeat after it passes it (9 × 7 s > 60 s). The others write nothing.
    expect(written).toEqual([2, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect((await getRun(run.id)).status).toBe("running");
    runner.close();
  });

  it("the stored lease is never before the exact one, and after a restart it expires on the store's clock", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: HEARTBEAT_MS, takeoverMs: 600_000 } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    await travel(run.id, BETWEEN_HEARTBEATS);
    runner.send({ type: "heartbeat", epoch });
    await runner.settle();
    // Two more heartbeats that write nothing: the exact lease moves on past what the first stored.
    let lastHeartbeat = 0;
    for (let i = 0; i < 2; i++) {
      await travel(run.id, BETWEEN_HEARTBEATS);
      lastHeartbeat = Date.now();
      runner.send({ type: "heartbeat", epoch });
      await runner.settle();
    }
    const due = await timerDue(run.id, "lease");
    // Stored times are moved back by travel instead of the clock going forward: the exact lease
    // of the last heartbeat is lastHeartbeat + HEARTBEAT_MS on the same scale as `due`.
    expect(due).toBeGreaterThanOrEqual(lastHeartbeat + HEARTBEAT_MS);
    expect(due).toBeLessThanOrEqual(lastHeartbeat + 2 * HEARTBEAT_MS);

    await evictDurableObject(runObject(run.id), { webSockets: "close" });
    expect(await timerDue(run.id, "lease")).toBe(due);

    await expectStallAtLease(run.id, due, epoch);
  });
});
