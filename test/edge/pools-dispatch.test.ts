import { describe, expect, it } from "vitest";
import { call, getRun, json, uniqueRunId } from "./helpers.ts";
import { connectHost, createPoolRun, mintPoolKey, setQueue, takeAssignment } from "./pool-helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

const freshQueue = () => `q-${uniqueRunId()}`.toLowerCase();

describe("dispatch to pool hosts", () => {
  it("connect → hello → welcome → assign → a bridge claims → it finishes → released frees the slot", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-e2e", slots: 1, queue });
    const { run } = await createPoolRun({ queue, input: { prompt: "write a haiku" } });
    expect(run).toMatchObject({ queue, agent: "demo", recoveryPolicy: { mode: "auto", maxRecoveries: 3 } });
    // A pool run may wait in its queue as long as it may run.
    expect(run.timeouts.claimMs).toBe(run.timeouts.runMs);

    const assign = await takeAssignment(host, run.id);
    expect(assign).toMatchObject({
      runId: run.id,
      profile: "demo",
      start: "run",
      generation: 1,
      prompt: "write a haiku",
    });
    expect(assign.leaseMs).toBe(30_000);
    expect((await getRun(run.id)).dispatch?.state).toBe("assigned");

    const { runner, epoch } = await claim(run.id, assign.runnerToken, "pool-bridge");
    const held = await getRun(run.id);
    expect(held).toMatchObject({ status: "running", poolHost: "host-e2e", dispatch: { state: "running" } });

    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    await runner.next("ack");
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    host.send({ type: "released", assignmentId: assign.assignmentId, runId: run.id, exitCode: 0 });
    await host.settle();

    const info = await json(await call(`/v1/queues/${queue}`), 200);
    expect(info).toMatchObject({ name: queue, depth: 0, running: 0, hosts: 1, freeSlots: 1 });
    expect(await getRun(run.id)).toMatchObject({ poolHost: "host-e2e", dispatch: { state: "finished" } });
    host.close();
  });

  it("assigns the oldest queued run first, and only to a host serving its profile with a free slot", async () => {
    const queue = freshQueue();
    // Runs created in the same millisecond are taken by runId: these ids sort as they are created.
    const id = (n: number) => `${queue}-${n}`;
    const first = await createPoolRun({ queue, runId: id(1) });
    const other = await createPoolRun({ queue, runId: id(2), agent: "other" });
    const second = await createPoolRun({ queue, runId: id(3) });
    const third = await createPoolRun({ queue, runId: id(4) });
    expect((await getRun(first.run.id)).queuePosition).toBe(1);
    expect(await getRun(third.run.id)).toMatchObject({
      queuePosition: 4,
      dispatch: { state: "queued", reason: 'no connected pool host serves profile "demo"' },
    });

    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-order", slots: 2, queue });
    const assigned = [await host.next("assign"), await host.next("assign")].map((frame) => frame.runId);
    expect(assigned).toEqual([first.run.id, second.run.id]);
    await host.settle();
    expect(host.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    expect(await getRun(third.run.id)).toMatchObject({
      queuePosition: 2,
      dispatch: { reason: 'waiting for a free slot on a host serving "demo"' },
    });
    expect(await getRun(other.run.id)).toMatchObject({
      queuePosition: 1,
      dispatch: { reason: 'no connected pool host serves profile "other"' },
    });
    host.close();
  });

  it("holds at most maxConcurrent runs; a run that ends frees its place at once; raising the limit assigns more", async () => {
    const queue = freshQueue();
    expect((await setQueue(queue, { maxConcurrent: 1 })).status).toBe(200);
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-limit", slots: 4, queue });
    const runs = [];
    for (const n of [1, 2, 3]) runs.push(await createPoolRun({ queue, runId: `${queue}-${n}` }));
    const firstAssign = await takeAssignment(host, runs[0]?.run.id);
    await host.settle();
    expect(host.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    expect(await getRun(runs[1]?.run.id as string)).toMatchObject({
      queuePosition: 1,
      dispatch: { reason: "the queue holds its maxConcurrent of 1 runs" },
    });
    const detail = await json(await call(`/v1/queues/${queue}`), 200);
    expect(detail).toMatchObject({ depth: 2, running: 1, freeSlots: 3 });
    expect(detail.runs.map((entry: any) => [entry.runId, entry.state, entry.queuePosition, entry.poolHost])).toEqual([
      [runs[0]?.run.id, "assigned", null, "host-limit"],
      [runs[1]?.run.id, "queued", 1, null],
      [runs[2]?.run.id, "queued", 2, null],
    ]);

    const { runner, epoch } = await claim(firstAssign.runId, firstAssign.runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    // The run ended: its place goes to the next run before the host even says its bridge exited.
    expect((await host.next("assign")).runId).toBe(runs[1]?.run.id);

    expect((await setQueue(queue, { maxConcurrent: null })).status).toBe(200);
    expect((await host.next("assign")).runId).toBe(runs[2]?.run.id);
    host.close();
  });

  it("spreads runs over hosts by free slots, and a host only ever gets its own queue's runs", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const a = await connectHost(key, { hostId: "host-a", slots: 1, queue });
    const b = await connectHost(key, { hostId: "host-b", slots: 1, queue });
    const elsewhere = await connectHost(key, { hostId: "host-elsewhere", slots: 4, queue: freshQueue() });
    const one = await createPoolRun({ queue });
    const two = await createPoolRun({ queue });
    const got = [await a.next("assign"), await b.next("assign")].map((frame) => frame.runId).sort();
    expect(got).toEqual([one.run.id, two.run.id].sort());
    await elsewhere.settle();
    expect(elsewhere.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    const pools = await json(await call("/v1/pools"), 200);
    const hostA = pools.hosts.find((entry: { hostId: string }) => entry.hostId === "host-a");
    expect(hostA).toMatchObject({ queue, slots: 1, freeSlots: 0, profiles: ["demo"] });
    expect(hostA.runs).toHaveLength(1);
    for (const host of [a, b, elsewhere]) host.close();
  });

  it("a host that declines is not asked again for a while: the run goes to another host", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const picky = await connectHost(key, { hostId: "host-1-picky", slots: 2, queue });
    const { run } = await createPoolRun({ queue });
    const declined = await picky.next("assign");
    picky.send({ type: "declined", assignmentId: declined.assignmentId, reason: "profile broken here" });
    await picky.settle();
    expect(await getRun(run.id)).toMatchObject({ queuePosition: 1, dispatch: { state: "queued" } });
    const willing = await connectHost(key, { hostId: "host-2-willing", slots: 1, queue });
    const assign = await willing.next("assign");
    expect(assign.runId).toBe(run.id);
    expect(assign.assignmentId).not.toBe(declined.assignmentId);
    // The token the picky host gave back was revoked before the run was offered again.
    const late = await call(`/v1/runs/${run.id}/runner`, {
      headers: { upgrade: "websocket" },
      key: declined.runnerToken,
    });
    expect((await json(late, 401)).error.code).toBe("token_revoked");
    picky.close();
    willing.close();
  });
});
