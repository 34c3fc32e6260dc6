import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { marker, touch, transcript, usePools } from "./harness.ts";

// Runner pools, tests 2, 3, 4 and 7: a lost host's runs are recovered on another host with no
// operator call, an assignment nobody claims is taken back, and automatic recovery is bounded.

const t = usePools();
/** Quick loss detection: the lease lapses after 2 s, the takeover window 0.3 s later. */
const TIMEOUTS = { heartbeatMs: 2000, takeoverMs: 300, recoverMs: 60_000 };

/** The run's record once a host holds it; which host, as the record names it. */
async function heldBy(runId: string): Promise<string> {
  return waitFor(
    `run ${runId} to be held by a pool host`,
    async () => {
      const run = (await t.api.getRun(runId)) as unknown as { status: string; poolHost: string | null };
      return run.status === "running" && run.poolHost ? run.poolHost : null;
    },
    60_000,
  );
}

describe("a pool host lost mid-run", () => {
  it("after a fresh checkpoint: recovering → resume on the other host, no operator, every event once", async () => {
    const { key } = await t.poolKey();
    const a = t.host({ key, slots: 1 });
    const idA = await a.hostId();
    const started = marker("started");
    const goOn = marker("go-on");
    const runId = await t.createRun(
      [
        { session: "s-1" },
        { out: "generation one's work" },
        { turnEnd: "turn-1" },
        { touch: started },
        { waitFile: goOn },
        { out: "generation two goes on" },
      ],
      { timeouts: TIMEOUTS },
    );
    expect(await heldBy(runId)).toBe(idA);
    await waitFor("the agent to reach its wait", () => fs.existsSync(started), 30_000);
    await waitFor(
      "a checkpoint covering the turn",
      async () => (await t.api.getRun(runId)).checkpoint?.sourceSeq === 3,
    );
    const b = t.host({ key, slots: 1 });
    const idB = await b.hostId();
    await a.destroy();
    touch(goOn);

    const done = await t.api.waitForStatus(runId, "succeeded", 90_000);
    expect(done).toMatchObject({ generation: 2 });
    expect(b.accepted()).toEqual([runId]);
    const { runnerRows, texts, control, events } = await transcript(t.api, runId);
    expect(runnerRows).toEqual([
      [1, 1, "agent.session"],
      [1, 2, "TEXT_MESSAGE_CHUNK"],
      [1, 3, "RUN_FINISHED"],
      [2, 1, "TEXT_MESSAGE_CHUNK"],
    ]);
    expect(texts).toEqual(["generation one's work\n", "generation two goes on\n"]);
    expect(control).toEqual([
      "run.created",
      "run.claimed",
      "run.stalled",
      "run.recovering",
      "run.recovery.automatic",
      "run.generation.started",
      "run.claimed",
      "run.finished",
    ]);
    const automatic = events.find((e) => e.type === "run.recovery.automatic")?.data;
    expect(automatic).toMatchObject({ attempt: 1, maxRecoveries: 3, mode: "resume" });
    expect(events.find((e) => e.type === "run.generation.started")?.data).toMatchObject({
      generation: 2,
      mode: "resume",
    });
    const claims = events.filter((e) => e.type === "run.claimed").map((e) => (e.data as { runnerId: string }).runnerId);
    expect(claims).toHaveLength(2);
    expect(idB).not.toBe(idA);
  });

  it("before any session: restart on the other host, automatically", async () => {
    const { key } = await t.poolKey();
    const a = t.host({ key, slots: 1 });
    await a.hostId();
    const started = marker("started");
    const goOn = marker("go-on");
    const runId = await t.createRun([{ touch: started }, { waitFile: goOn }, { out: "a fresh start" }], {
      timeouts: TIMEOUTS,
    });
    await heldBy(runId);
    await waitFor("the agent to start", () => fs.existsSync(started), 30_000);
    const b = t.host({ key, slots: 1 });
    await b.hostId();
    await a.destroy();
    touch(goOn);

    await t.api.waitForStatus(runId, "succeeded", 90_000);
    expect(b.accepted()).toEqual([runId]);
    const { runnerRows, texts, control, events } = await transcript(t.api, runId);
    expect(runnerRows).toEqual([[1, 1, "TEXT_MESSAGE_CHUNK"]]);
    expect(texts).toEqual(["a fresh start\n"]);
    expect(control).toEqual([
      "run.created",
      "run.claimed",
      "run.stalled",
      "run.recovering",
      "run.recovery.automatic",
      "run.claimed",
      "run.finished",
    ]);
    expect(events.find((e) => e.type === "run.recovery.automatic")?.data).toMatchObject({
      attempt: 1,
      mode: "restart",
    });
  });

  it("a host that accepts and dies before claiming: the run is assigned again when the lease lapses", async () => {
    const queue = "short-lease";
    // The doomed host's lease is 5 s; the second host's is a minute, set once the doomed one has
    // its assignment: a lapsed lease revokes its token, so a bridge slowed by a loaded machine
    // past a short lease would be refused and the run assigned again (legitimately, but not this test).
    const setLease = async (assignMs: number) =>
      expect((await t.api.request("PUT", `/v1/queues/${queue}`, { maxConcurrent: null, assignMs })).status).toBe(200);
    await setLease(5000);
    const { key } = await t.poolKey();
    const doomed = t.host({ key, queue, env: { RUNNER_POOL_FAULT: "die-after-accept" } });
    await doomed.hostId();
    const runId = await t.createRun([{ out: "claimed at last" }], { queue });
    await waitFor("the doomed host to accept the run and die of SIGKILL", () => doomed.exited(), 30_000);
    expect(doomed.output()).toContain(`run ${runId}); dying before any bridge starts`);
    expect(doomed.child.signalCode).toBe("SIGKILL");
    await setLease(60_000);
    const b = t.host({ key, queue });
    await b.hostId();

    await t.api.waitForStatus(runId, "succeeded", 60_000);
    const logs = `the doomed host's log:\n${doomed.output()}\nthe second host's log:\n${b.output()}`;
    expect(b.accepted(), logs).toEqual([runId]);
    const { texts, control } = await transcript(t.api, runId);
    expect(texts, logs).toEqual(["claimed at last\n"]);
    expect(control, logs).toEqual(["run.created", "run.claimed", "run.finished"]);
  });

  it("a host that starts its bridge after its lease lapsed is refused token_revoked; the run is the second host's, exactly", async () => {
    const queue = "late-start";
    const setLease = async (assignMs: number) =>
      expect((await t.api.request("PUT", `/v1/queues/${queue}`, { maxConcurrent: null, assignMs })).status).toBe(200);
    await setLease(3000);
    const { key } = await t.poolKey();
    const gate = marker("late-bridge-go");
    // The slow host has the most free slots, so it is offered the run first; once its lease lapses
    // the run goes to the other host, which is preferred to the one that last held it.
    const slow = t.host({ key, queue, slots: 3, env: { RUNNER_POOL_FAULT: `start-when:${gate}` } });
    const b = t.host({ key, queue, slots: 1 });
    await Promise.all([slow.hostId(), b.hostId()]);
    const running = marker("running-on-b");
    const goOn = marker("go-on");
    const runId = await t.createRun(
      [{ out: "on the second host" }, { touch: running }, { waitFile: goOn }, { out: "done" }],
      {
        queue,
      },
    );
    await waitFor(
      "the slow host to accept the run",
      () => slow.output().includes(`(run ${runId}); starting once`),
      30_000,
    );
    await setLease(60_000);
    await waitFor("the run's agent to be running on the second host", () => fs.existsSync(running), 60_000);

    touch(gate);
    await waitFor(
      "the slow host's late bridge to be refused its revoked token",
      () => slow.output().includes("this token was revoked"),
      30_000,
    );
    touch(goOn);
    await t.api.waitForStatus(runId, "succeeded", 60_000);
    const logs = `the slow host's log:\n${slow.output()}\nthe second host's log:\n${b.output()}`;
    expect(b.accepted(), logs).toEqual([runId]);
    const { texts, control } = await transcript(t.api, runId);
    expect(texts, logs).toEqual(["on the second host\n", "done\n"]);
    expect(control, logs).toEqual(["run.created", "run.claimed", "run.finished"]);
  });

  it("an agent that always takes its sandbox down: exactly maxRecoveries recoveries, then failed with the count", async () => {
    const { key } = await t.poolKey();
    const a = t.host({ key, slots: 1 });
    const b = t.host({ key, slots: 1 });
    await Promise.all([a.hostId(), b.hostId()]);
    const runId = await t.createRun([{ waitClaimed: true }, { killSandbox: true }], {
      timeouts: TIMEOUTS,
      maxRecoveries: 2,
    });
    const failed = await t.api.waitForStatus(runId, "failed", 120_000);
    expect(failed.outcome?.error?.code).toBe("runner_lost");
    expect(failed.outcome?.error?.message).toMatch(/lost 3 times.*2 automatic recoveries/);
    const { control, events, runnerRows } = await transcript(t.api, runId);
    expect(runnerRows).toEqual([]);
    const lost = ["run.claimed", "run.stalled", "run.recovering"];
    expect(control).toEqual([
      "run.created",
      ...lost,
      "run.recovery.automatic",
      ...lost,
      "run.recovery.automatic",
      ...lost,
      "run.finished",
    ]);
    const attempts = events
      .filter((e) => e.type === "run.recovery.automatic")
      .map((e) => (e.data as { attempt: number }).attempt);
    expect(attempts).toEqual([1, 2]);
    expect([...a.accepted(), ...b.accepted()]).toEqual([runId, runId, runId]);
  });
});
