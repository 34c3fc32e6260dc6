import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { advance, allEvents, call, createRun, DAY, getRun, json, runObject, timers, travel } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

const LONG = 40 * DAY;

describe("deadlines run on the object's alarm", () => {
  it("a run nobody claims times out", async () => {
    const { run } = await createRun({ timeouts: { claimMs: 1_000 } });
    await advance(run.id, 1_000);
    expect(await getRun(run.id)).toMatchObject({
      status: "timed_out",
      outcome: { status: "timed_out", error: { code: "claim_timeout" } },
    });
    const before = await allEvents(run.id);
    await advance(run.id, 1_000);
    expect(await allEvents(run.id)).toEqual(before);
  });

  it("a missed heartbeat stalls the run; after the takeover window it is recovering; once recoverMs passes it fails with runner_lost", async () => {
    const timeouts = { heartbeatMs: 1_000, takeoverMs: 5_000, recoverMs: 20_000, idleMs: LONG };
    const { run, runnerToken } = await createRun({ timeouts });
    const { runner } = await claim(run.id, runnerToken);
    await advance(run.id, 1_000);
    expect((await getRun(run.id)).status).toBe("stalled");
    expect((await allEvents(run.id)).at(-1)).toMatchObject({ type: "run.stalled", data: { epoch: 1 } });
    await advance(run.id, 5_000);
    expect(await getRun(run.id)).toMatchObject({ status: "recovering", outcome: null, recovery: { mode: "restart" } });
    await advance(run.id, 15_000);
    expect((await getRun(run.id)).status).toBe("recovering");
    await advance(run.id, 5_000);
    expect(await getRun(run.id)).toMatchObject({ status: "failed", outcome: { error: { code: "runner_lost" } } });
    expect(await runner.next("rejected")).toMatchObject({ reason: "terminal-run", status: "failed" });
    expect((await runner.waitClosed()).code).toBe(4002);
  });

  it("a stalled run is taken over by a new claim, and the takeover deadline is dropped", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 1_000, takeoverMs: 5_000, idleMs: LONG } });
    await claim(run.id, runnerToken, "first");
    await advance(run.id, 1_000);
    const { epoch } = await claim(run.id, runnerToken, "successor");
    expect(epoch).toBe(2);
    expect((await getRun(run.id)).status).toBe("running");
    expect((await timers(run.id)).map((t) => t.kind)).not.toContain("takeover");
  });

  it("the same runner heartbeating again resumes a stalled run", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 1_000, takeoverMs: 5_000, idleMs: LONG } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    await advance(run.id, 1_000);
    runner.send({ type: "heartbeat", epoch });
    await runner.settle();
    expect((await getRun(run.id)).status).toBe("running");
    expect((await allEvents(run.id)).at(-1)).toMatchObject({ type: "run.resumed" });
  });

  it("heartbeats renew the lease", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 60_000 } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    const leaseExpiresAt = async () => Date.parse((await getRun(run.id)).runner.leaseExpiresAt ?? "none");
    const claimedLease = await leaseExpiresAt();
    await travel(run.id, 30_000);
    expect(await leaseExpiresAt()).toBe(claimedLease - 30_000);
    runner.send({ type: "heartbeat", epoch });
    await runner.settle();
    expect(await leaseExpiresAt()).toBeGreaterThanOrEqual(claimedLease);
  });

  it("an idle runner is timed out and told to cancel", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { idleMs: 2_000, heartbeatMs: LONG } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    await runner.next("ack");
    await advance(run.id, 2_000);
    expect(await getRun(run.id)).toMatchObject({ status: "timed_out", outcome: { error: { code: "idle_timeout" } } });
    expect(await runner.next("command")).toMatchObject({ kind: "cancel", commandId: "~idle_timeout" });
    expect(await runner.next("rejected")).toMatchObject({ status: "timed_out" });
  });

  it("a 30-day run deadline is kept in storage and ends the run timed_out with a cancel to the runner", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { runMs: 30 * DAY, heartbeatMs: LONG, idleMs: LONG } });
    const { runner } = await claim(run.id, runnerToken);
    const deadline = (await timers(run.id)).find((t) => t.kind === "deadline");
    expect(deadline?.due_at).toBe(Date.parse(run.createdAt) + 30 * DAY);
    const alarm = await runInDurableObject(runObject(run.id), (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBe(deadline?.due_at);
    await advance(run.id, 30 * DAY - 60_000);
    expect((await getRun(run.id)).status).toBe("running");
    await advance(run.id, 60_000);
    expect(await getRun(run.id)).toMatchObject({ status: "timed_out", outcome: { error: { code: "run_deadline" } } });
    expect(await runner.next("command")).toMatchObject({ kind: "cancel", commandId: "~run_deadline" });
    expect(await runner.next("rejected")).toMatchObject({ reason: "terminal-run", status: "timed_out" });
  });

  it("a runner that does not confirm a cancel within the grace period is overruled", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: LONG, idleMs: LONG } });
    const { runner } = await claim(run.id, runnerToken);
    await json(await call(`/v1/runs/${run.id}/cancel`, { method: "POST" }), 202);
    await runner.next("command");
    await advance(run.id, 30_000);
    expect(await getRun(run.id)).toMatchObject({
      status: "cancelled",
      outcome: { error: { code: "cancel_unconfirmed" } },
    });
    expect(await runner.next("rejected")).toMatchObject({ status: "cancelled" });
  });

  it("a finished run is purged when its retention passes, leaving a 410 tombstone", async () => {
    const { run, runnerToken } = await createRun({ retentionMs: 10_000 });
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    await advance(run.id, 10_000);
    expect(await json(await call(`/v1/runs/${run.id}`), 410)).toMatchObject({
      error: { code: "gone" },
      status: "succeeded",
    });
    expect(await timers(run.id)).toEqual([]);
  });
});

/** Everything observable about a run: its record (or 410), its log and its deadlines. */
async function observe(runId: string) {
  const read = async (path: string) => {
    const response = await call(path);
    return { status: response.status, body: await response.json() };
  };
  return {
    run: await read(`/v1/runs/${runId}`),
    log: await read(`/v1/runs/${runId}/events?after=0&limit=500`),
    timers: await timers(runId),
  };
}

/** Delivers a timer that already fired once more: its row is back, due, and the alarm rings. */
async function redeliver(runId: string, kind: string, ref = ""): Promise<void> {
  await runInDurableObject(runObject(runId), async (_instance, state) => {
    state.storage.sql.exec("INSERT INTO timers (kind, ref, due_at) VALUES (?, ?, ?)", kind, ref, Date.now() - 1);
    await state.storage.setAlarm(Date.now() + DAY);
  });
  if (!(await runDurableObjectAlarm(runObject(runId)))) throw new Error("the run's alarm did not run");
}

describe("alarms are delivered at least once: a timer that fires again changes nothing", () => {
  const stalled = async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 1_000, takeoverMs: 5_000, idleMs: LONG } });
    await claim(run.id, runnerToken);
    await advance(run.id, 1_000);
    expect((await getRun(run.id)).status).toBe("stalled");
    return run.id;
  };
  const finished = async (retentionMs: number) => {
    const { run, runnerToken } = await createRun({ retentionMs });
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    return run.id;
  };

  it.each<[string, string, () => Promise<string>]>([
    [
      "claim",
      "",
      async () => {
        const { run } = await createRun({ timeouts: { claimMs: 1_000 } });
        await advance(run.id, 1_000);
        return run.id;
      },
    ],
    ["lease", "", stalled],
    [
      "takeover",
      "",
      async () => {
        const runId = await stalled();
        await advance(runId, 5_000);
        return runId;
      },
    ],
    [
      "recover",
      "",
      async () => {
        const runId = await stalled();
        await advance(runId, 5_000);
        await advance(runId, 3_600_000);
        expect((await getRun(runId)).status).toBe("failed");
        return runId;
      },
    ],
    [
      "approval",
      "req-1",
      async () => {
        const { run, runnerToken } = await createRun({ timeouts: { approvalMs: 60_000, heartbeatMs: LONG } });
        const { runner, epoch } = await claim(run.id, runnerToken);
        runner.send({ type: "events", epoch, events: [agentEvent(1, "approval.requested", { requestId: "req-1" })] });
        await runner.next("ack");
        await advance(run.id, 60_000);
        return run.id;
      },
    ],
    [
      "idle",
      "",
      async () => {
        const { run, runnerToken } = await createRun({ timeouts: { idleMs: 2_000, heartbeatMs: LONG } });
        await claim(run.id, runnerToken);
        await advance(run.id, 2_000);
        return run.id;
      },
    ],
    [
      "deadline",
      "",
      async () => {
        const { run } = await createRun({ timeouts: { runMs: 3_000 } });
        await advance(run.id, 3_000);
        return run.id;
      },
    ],
    [
      "cancel_grace",
      "",
      async () => {
        const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: LONG, idleMs: LONG } });
        const { runner } = await claim(run.id, runnerToken);
        await json(await call(`/v1/runs/${run.id}/cancel`, { method: "POST" }), 202);
        await runner.next("command");
        await advance(run.id, 30_000);
        return run.id;
      },
    ],
    [
      "retention",
      "",
      async () => {
        const runId = await finished(10_000);
        await advance(runId, 10_000);
        return runId;
      },
    ],
  ])("the %s timer", async (kind, ref, fired) => {
    const runId = await fired();
    const before = await observe(runId);
    expect(before.timers.map((t) => [t.kind, t.ref])).not.toContainEqual([kind, ref]);
    await redeliver(runId, kind, ref);
    expect(await observe(runId)).toEqual(before);
  });
});
