import { describe, expect, it } from "vitest";
import { call, getRun, json, uniqueRunId } from "./helpers.ts";
import { connectHost, createPoolRun, mintPoolKey, setQueue, takeAssignment } from "./pool-helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

describe("dispatch to pool hosts", () => {
  it("connect → hello → welcome → assign → a bridge claims → it finishes → released frees the slot", async () => {
    const queue = `q-${uniqueRunId()}`.toLowerCase();
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-e2e", slots: 1, queue });
    const { run } = await createPoolRun({ queue, input: { prompt: "write a haiku" } });
    expect(run).toMatchObject({ queue, agent: "demo", recoveryPolicy: { mode: "auto", maxRecoveries: 3 } });

    const assign = await takeAssignment(host, run.id);
    expect(assign).toMatchObject({
      runId: run.id,
      profile: "demo",
      start: "run",
      generation: 1,
      prompt: "write a haiku",
    });
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
    expect((await getRun(run.id)).dispatch?.state).toBe("finished");
    expect((await setQueue(queue, { maxConcurrent: 2 })).status).toBe(200);
    host.close();
  });
});
