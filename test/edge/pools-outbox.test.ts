import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DispatcherApi } from "../../src/objects/stubs.ts";
import { Outbox } from "../../src/run/outbox.ts";
import type { PoolNotice } from "../../src/run/pool-run.ts";
import { RunMachine } from "../../src/run/run-machine.ts";
import { getRun, runObject, timers, travel, uniqueRunId } from "./helpers.ts";
import { connectHost, createPoolRun, dispatcherObject, mintPoolKey, takeAssignment } from "./pool-helpers.ts";

const freshQueue = () => `q-${uniqueRunId()}`.toLowerCase();

type Row = { seq: number; dedupe_key: string; attempts: number };
const outboxRows = (runId: string) =>
  runInDurableObject(runObject(runId), (_instance, state) =>
    state.storage.sql.exec<Row>("SELECT seq, dedupe_key, attempts FROM outbox ORDER BY seq").toArray(),
  );

/** Rings the run's alarm as if `ms` had passed. */
async function ringRun(runId: string, ms: number): Promise<void> {
  await travel(runId, ms);
  expect(await runDurableObjectAlarm(runObject(runId))).toBe(true);
}

describe("the run's outbox to its dispatcher", () => {
  it("a change committed by a run object that dies before delivering it is delivered by the alarm", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-crash", slots: 1, queue });
    const { run } = await createPoolRun({ queue });
    const assign = await takeAssignment(host, run.id);
    expect(await outboxRows(run.id)).toEqual([]);

    // The cancel commits with its outbox row, and the object stops there: nothing was delivered.
    await runInDurableObject(runObject(run.id), (_instance, state) => {
      state.storage.transactionSync(() => {
        new RunMachine(state.storage.sql, Date.now(), () => false).cancel("~crash", "crash test", undefined);
      });
    });
    // The webhooks' notice of the cancel is committed with it too (src/run/webhook-notices.ts).
    expect((await outboxRows(run.id)).map((row) => row.dedupe_key)).toEqual([
      "dispatcher:finished:1:0",
      "webhooks:run.cancelled:once",
    ]);
    expect((await timers(run.id)).map((timer) => timer.kind)).toContain("outbox");
    expect((await getRun(run.id)).dispatch?.state).toBe("assigned");

    await ringRun(run.id, 1_000);
    expect(await outboxRows(run.id)).toEqual([]);
    expect((await timers(run.id)).map((timer) => timer.kind)).not.toContain("outbox");
    expect(await getRun(run.id)).toMatchObject({ status: "cancelled", dispatch: { state: "finished" } });
    expect(await host.next("revoke")).toMatchObject({ assignmentId: assign.assignmentId, reason: "the run ended" });
    host.close();
  });

  it("a failed delivery keeps the row and its order, backs off, and the alarm delivers it later", async () => {
    const queue = freshQueue();
    const { run } = await createPoolRun({ queue });
    const failures = await runInDurableObject(runObject(run.id), async (_instance, state) => {
      const outbox = new Outbox(state.storage.sql);
      state.storage.transactionSync(() => {
        new RunMachine(state.storage.sql, Date.now(), () => false).cancel("~down", "dispatcher down", undefined);
      });
      const down = async () => {
        throw new Error("the dispatcher is unreachable");
      };
      const first = await outbox.flush(down, Date.now);
      const second = await outbox.flush(down, Date.now);
      return { first, second };
    });
    expect(failures).toEqual({ first: { delivered: 0, failed: true }, second: { delivered: 0, failed: true } });
    // Delivery stopped at the first row each time: the later one waits its turn, untried.
    expect(await outboxRows(run.id)).toMatchObject([
      { dedupe_key: "dispatcher:finished:1:0", attempts: 2 },
      { dedupe_key: "webhooks:run.cancelled:once", attempts: 0 },
    ]);
    const retryAt = (await timers(run.id)).find((timer) => timer.kind === "outbox")?.due_at ?? 0;
    expect(retryAt - Date.now()).toBeGreaterThan(1_000); // the second failure waits 2 s, not 1

    await ringRun(run.id, 2_000);
    expect(await outboxRows(run.id)).toEqual([]);
    expect((await getRun(run.id)).dispatch?.state).toBe("finished");
  });

  it("a notification delivered twice (its acknowledgement lost) changes nothing the second time", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-dup", slots: 4, queue });
    const { run } = await createPoolRun({ queue, input: { prompt: "once" } });
    expect((await host.next("assign")).runId).toBe(run.id);
    // The run's first outbox row, exactly as it was delivered, delivered again.
    const notice: PoolNotice = {
      kind: "queued",
      tenant: "tenant-a",
      queue,
      runId: run.id,
      profile: "demo",
      prompt: "once",
      createdAt: Date.parse(run.createdAt),
      tokenTtlMs: 60_000,
      generation: 1,
      episode: 0,
      start: "run",
    };
    const dispatcher = dispatcherObject(queue) as unknown as DispatcherApi;
    const deliver = (seq: number) => dispatcher.notice(notice, seq, "dispatcher:queued:1:0");
    expect(await deliver(1)).toEqual({ ok: true, value: { applied: false } });
    // The same key under a later seq (the row added again after a crash): still the same notification.
    expect(await deliver(7)).toEqual({ ok: true, value: { applied: false } });
    await host.settle();
    expect(host.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    expect(await getRun(run.id)).toMatchObject({ dispatch: { state: "assigned" }, poolHost: "host-dup" });
    host.close();
  });
});
