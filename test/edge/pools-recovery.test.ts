import { describe, expect, it } from "vitest";
import { advance, allEvents, getRun, json, uniqueRunId } from "./helpers.ts";
import { connectHost, createPoolRun, mintPoolKey, takeAssignment } from "./pool-helpers.ts";
import { LOSABLE, lose, patterned, putCheckpoint, recover, session } from "./recovery-helpers.ts";
import { agentEvent, claim, connectRunner, type SocketProbe } from "./sockets.ts";

const freshQueue = () => `q-${uniqueRunId()}`.toLowerCase();

/** Two hosts on a fresh queue, and a pool run of it the first host has claimed. */
async function heldPoolRun(body: Record<string, unknown> = {}) {
  const queue = freshQueue();
  const { key } = await mintPoolKey();
  const first = await connectHost(key, { hostId: "host-1", slots: 1, queue });
  const { run } = await createPoolRun({ queue, timeouts: LOSABLE, ...body });
  const assign = await takeAssignment(first, run.id);
  const second = await connectHost(key, { hostId: "host-2", slots: 1, queue });
  const { runner, epoch } = await claim(run.id, assign.runnerToken, "bridge-1");
  return { queue, key, runId: run.id, first, second, assign, runner, epoch };
}

const automaticRows = async (runId: string) =>
  (await allEvents(runId)).filter((event) => event.type === "run.recovery.automatic").map((event) => event.data);

function closeAll(...sockets: SocketProbe[]) {
  for (const socket of sockets) socket.close();
}

describe("automatic recovery of pool runs", () => {
  it("resume: a lost run with a fresh checkpoint is resumed as generation 2 on the other host, with no operator", async () => {
    const held = await heldPoolRun();
    held.runner.send({ type: "events", epoch: held.epoch, events: [session(1), agentEvent(2)] });
    await held.runner.next("ack");
    const upload = { epoch: held.epoch, generation: 1, sourceSeq: 2, body: patterned(500) };
    expect((await putCheckpoint(held.runId, held.assign.runnerToken, upload)).status).toBe(201);

    await lose(held.runId);
    const resume = await held.second.next("assign");
    expect(resume).toMatchObject({ runId: held.runId, start: "resume", generation: 2 });
    expect(await automaticRows(held.runId)).toEqual([{ attempt: 1, maxRecoveries: 3, mode: "resume", generation: 1 }]);
    expect(await getRun(held.runId)).toMatchObject({
      status: "recovering",
      poolHost: "host-2",
      recoveryPolicy: { mode: "auto", automaticRecoveries: 1 },
    });

    const bridge = await connectRunner(held.runId, resume.runnerToken);
    bridge.send({ type: "hello", runnerId: "bridge-2", generation: 2, resume: true });
    expect(await bridge.next("claimed")).toMatchObject({ generation: 2 });
    expect(await getRun(held.runId)).toMatchObject({
      status: "running",
      generation: 2,
      dispatch: { state: "running" },
    });
    closeAll(held.first, held.second, held.runner, bridge);
  });

  it("restart: a run lost before its agent stored anything starts over on the other host", async () => {
    const held = await heldPoolRun();
    await lose(held.runId);
    const restart = await held.second.next("assign");
    expect(restart).toMatchObject({ runId: held.runId, start: "run", generation: 1 });
    const again = await claim(held.runId, restart.runnerToken, "bridge-2");
    expect(await getRun(held.runId)).toMatchObject({ status: "running", poolHost: "host-2" });
    closeAll(held.first, held.second, held.runner, again.runner);
  });

  it("ambiguous waits, parked with its reason, for POST /recover; the decision is then dispatched", async () => {
    const held = await heldPoolRun();
    held.runner.send({ type: "events", epoch: held.epoch, events: [agentEvent(1)] });
    await held.runner.next("ack");
    await lose(held.runId);
    await held.second.settle();
    expect(held.second.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    const parked = await getRun(held.runId);
    expect(parked.dispatch?.state).toBe("parked");
    expect(parked.dispatch?.reason).toMatch(/waiting for an operator's recover decision/);
    expect(await automaticRows(held.runId)).toEqual([]);

    await json(await recover(held.runId, "restart", "op-1"), 201);
    expect(await held.second.next("assign")).toMatchObject({ runId: held.runId, start: "run", generation: 2 });
    closeAll(held.first, held.second, held.runner);
  });

  it("policy manual: even a restartable run waits for an operator", async () => {
    const held = await heldPoolRun({ recovery: "manual" });
    await lose(held.runId);
    await held.second.settle();
    expect(held.second.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    expect((await getRun(held.runId)).dispatch?.reason).toMatch(/recovery policy is manual/);
    await json(await recover(held.runId, "restart", "op-manual"), 201);
    expect((await held.second.next("assign")).runId).toBe(held.runId);
    closeAll(held.first, held.second, held.runner);
  });

  it("bounded: past maxRecoveries automatic recoveries the run fails runner_lost, naming the count", async () => {
    const held = await heldPoolRun({ maxRecoveries: 1 });
    await lose(held.runId);
    const retry = await held.second.next("assign");
    const again = await claim(held.runId, retry.runnerToken, "bridge-2");
    // Lost again: the takeover window passes, and the bound is reached instead of a second recovery.
    await advance(held.runId, LOSABLE.heartbeatMs);
    await advance(held.runId, LOSABLE.takeoverMs);
    const failed = await getRun(held.runId);
    expect(failed.status).toBe("failed");
    expect(failed.outcome?.error).toEqual({
      code: "runner_lost",
      message: "the run was lost 2 times; the pool gave up after 1 automatic recovery (maxRecoveries 1)",
    });
    expect(await automaticRows(held.runId)).toHaveLength(1);
    expect(failed.dispatch?.state).toBe("finished");
    closeAll(held.first, held.second, held.runner, again.runner);
  });
});
