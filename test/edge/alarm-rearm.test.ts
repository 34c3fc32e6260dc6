import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { advance, call, getRun, runObject, timers, uniqueRunId } from "./helpers.ts";

/** The alarm of a run whose operation committed but threw before the alarm was set. */
async function alarmOf(runId: string): Promise<number | null> {
  return runInDurableObject(runObject(runId), (_instance, state) => state.storage.getAlarm());
}

describe("the alarm is re-armed from the timer rows", () => {
  it("a throw between the commit and setAlarm leaves a timer row that the next wake arms", async () => {
    const runId = uniqueRunId("rearm");
    // The next setAlarm throws once: the create commits its claim and deadline timers, then fails.
    await runInDurableObject(runObject(runId), (_instance, state) => {
      const storage = state.storage as { setAlarm: DurableObjectStorage["setAlarm"] };
      const setAlarm = storage.setAlarm.bind(state.storage);
      storage.setAlarm = () => {
        storage.setAlarm = setAlarm;
        throw new Error("injected: the isolate died before the alarm was set");
      };
    });
    const created = await call("/v1/runs", { method: "POST", json: { runId } });
    expect(created.status).toBe(500);
    const rows = await timers(runId);
    expect(rows.map((row) => row.kind)).toEqual(["claim", "deadline"]);
    expect(await alarmOf(runId)).toBeNull();

    await evictDurableObject(runObject(runId), { webSockets: "close" });
    expect((await getRun(runId)).status).toBe("queued");
    const earliest = Math.min(...rows.map((row) => row.due_at));
    expect(await alarmOf(runId)).toBe(earliest);

    // And the timer it arms fires: nobody claimed the run, so it times out.
    await advance(runId, 15 * 60 * 1000);
    expect((await getRun(runId)).status).toBe("timed_out");
  });

  it("a wake with no timer row leaves no alarm", async () => {
    const runId = uniqueRunId("rearm-none");
    await runInDurableObject(runObject(runId), async (_instance, state) => {
      expect(await state.storage.getAlarm()).toBeNull();
    });
    await evictDurableObject(runObject(runId), { webSockets: "close" });
    expect(await alarmOf(runId)).toBeNull();
  });
});
