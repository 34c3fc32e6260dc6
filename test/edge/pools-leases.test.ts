import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CLOSE_CREDENTIAL } from "../../src/protocol/index.ts";
import { allEvents, call, getRun, json, runnerTranscript, uniqueRunId } from "./helpers.ts";
import {
  advanceDispatcher,
  connectHost,
  createPoolRun,
  dispatcherObject,
  mintPoolKey,
  takeAssignment,
} from "./pool-helpers.ts";
import { agentEvent, claim, connectRunner } from "./sockets.ts";

const freshQueue = () => `q-${uniqueRunId()}`.toLowerCase();

describe("assignment leases", () => {
  it("an assignment not claimed within assignMs is revoked and assigned again, to another host", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const first = await connectHost(key, { hostId: "host-1", slots: 1, queue });
    const { run } = await createPoolRun({ queue });
    const lost = await takeAssignment(first, run.id);
    const second = await connectHost(key, { hostId: "host-2", slots: 1, queue });

    await advanceDispatcher(29_000, queue);
    await second.settle();
    expect(second.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    await advanceDispatcher(1_000, queue);

    const revoke = await first.next("revoke");
    expect(revoke).toMatchObject({ assignmentId: lost.assignmentId, runId: run.id });
    const again = await second.next("assign");
    expect(again).toMatchObject({ runId: run.id, start: "run", generation: 1 });
    expect(again.assignmentId).not.toBe(lost.assignmentId);
    expect(await getRun(run.id)).toMatchObject({ poolHost: "host-2", dispatch: { state: "assigned" } });

    // The first host's token was revoked before the run was offered again: its late bridge is refused.
    const late = await call(`/v1/runs/${run.id}/runner`, { headers: { upgrade: "websocket" }, key: lost.runnerToken });
    expect((await json(late, 401)).error.code).toBe("token_revoked");
    const current = await claim(run.id, again.runnerToken, "current-bridge");
    expect(current.epoch).toBe(1);
    for (const socket of [first, second, current.runner]) socket.close();
  });

  it("a lapsed assignment is fenced: the first host's late bridge is refused token_revoked, and the log is the second host's transcript", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const first = await connectHost(key, { hostId: "host-a", slots: 1, queue });
    const { run } = await createPoolRun({ queue });
    const lost = await takeAssignment(first, run.id);
    // The first host's bridge dialled in but never said hello before its lease ran out.
    const lateSocket = await connectRunner(run.id, lost.runnerToken);
    const second = await connectHost(key, { hostId: "host-b", slots: 1, queue });
    await advanceDispatcher(30_000, queue);
    expect(await first.next("revoke")).toMatchObject({ assignmentId: lost.assignmentId, runId: run.id });
    expect(await lateSocket.next("error")).toMatchObject({ code: "token_revoked" });
    expect((await lateSocket.waitClosed()).code).toBe(CLOSE_CREDENTIAL);

    const again = await takeAssignment(second, run.id);
    const current = await claim(run.id, again.runnerToken, "bridge-b");
    const transcript = [agentEvent(1), agentEvent(2), agentEvent(3, "TEXT_MESSAGE_END", { done: true })];
    current.runner.send({ type: "events", epoch: current.epoch, events: transcript.slice(0, 2) });
    expect(await current.runner.next("ack")).toMatchObject({ highestSourceSeq: 2 });
    // The first host's bridge comes back late: refused, and the second keeps its claim.
    const late = await call(`/v1/runs/${run.id}/runner`, { headers: { upgrade: "websocket" }, key: lost.runnerToken });
    expect((await json(late, 401)).error.code).toBe("token_revoked");
    current.runner.send({ type: "events", epoch: current.epoch, events: transcript.slice(2) });
    expect(await current.runner.next("ack")).toMatchObject({ highestSourceSeq: 3 });

    expect(await runnerTranscript(run.id)).toEqual(
      transcript.map((event) => [event.sourceSeq, event.type, event.data]),
    );
    const claims = (await allEvents(run.id)).filter((event) => event.type === "run.claimed");
    expect(claims.map((event) => (event.data as { runnerId: string }).runnerId)).toEqual(["bridge-b"]);
    expect(await getRun(run.id)).toMatchObject({ status: "running", epoch: 1, poolHost: "host-b" });
    for (const socket of [first, second, current.runner]) socket.close();
  });

  it("a host that comes back still running an assignment taken from it is told to stop it", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const first = await connectHost(key, { hostId: "host-a", slots: 1, queue });
    const { run } = await createPoolRun({ queue });
    const lost = await takeAssignment(first, run.id);
    const second = await connectHost(key, { hostId: "host-b", slots: 1, queue });
    await advanceDispatcher(30_000, queue);
    const again = await takeAssignment(second, run.id);
    first.close();
    await first.waitClosed();

    const back = await connectHost(key, {
      hostId: "host-a",
      slots: 1,
      queue,
      running: [{ assignmentId: lost.assignmentId, runId: run.id }],
    });
    expect(await back.next("revoke")).toMatchObject({ assignmentId: lost.assignmentId, runId: run.id });
    expect(await getRun(run.id)).toMatchObject({ poolHost: "host-b", dispatch: { state: "assigned" } });
    const pools = await json(await call("/v1/pools"), 200);
    const listed = pools.hosts.find((entry: { hostId: string }) => entry.hostId === "host-b");
    expect(listed).toMatchObject({ runs: [{ runId: run.id, assignmentId: again.assignmentId }] });
    for (const socket of [back, second]) socket.close();
  });

  it("a lease whose alarm was lost is armed again when the dispatcher wakes", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-wake", slots: 1, queue });
    const { run } = await createPoolRun({ queue });
    await takeAssignment(host, run.id);
    const leaseDue = await runInDurableObject(dispatcherObject(queue), async (_instance, state) => {
      expect(await state.storage.getAlarm()).not.toBeNull();
      // As if the object died between committing the assignment and arming its alarm.
      await state.storage.deleteAlarm();
      return state.storage.sql.exec<{ due: number }>("SELECT lease_due AS due FROM runs").one().due;
    });
    await evictDurableObject(dispatcherObject(queue), { webSockets: "close" });
    await host.waitClosed();
    await json(await call(`/v1/queues/${queue}`), 200);
    const armed = await runInDurableObject(dispatcherObject(queue), (_instance, state) => state.storage.getAlarm());
    expect(armed).toBe(leaseDue);
  });

  it("a lapsed lease whose run was claimed after all is kept, not dispatched a second time", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-claimed", slots: 2, queue });
    const { run } = await createPoolRun({ queue });
    const assign = await takeAssignment(host, run.id);
    const { runner } = await claim(run.id, assign.runnerToken);
    // As if the run's `claimed` notification had not arrived yet when the lease lapsed.
    await runInDurableObject(dispatcherObject(queue), (_instance, state) => {
      state.storage.sql.exec("UPDATE runs SET state = 'assigned', lease_due = ? WHERE run_id = ?", Date.now(), run.id);
    });
    await advanceDispatcher(1_000, queue);
    await host.settle();
    expect(host.frames.filter((frame) => frame.type === "revoke" || frame.type === "assign")).toEqual([]);
    expect(await getRun(run.id)).toMatchObject({ status: "running", dispatch: { state: "running" } });
    host.close();
    runner.close();
  });

  it("a bridge that exits before claiming frees its assignment: the run is checked and assigned again", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const first = await connectHost(key, { hostId: "host-1", slots: 1, queue });
    const { run } = await createPoolRun({ queue });
    const assign = await takeAssignment(first, run.id);
    const second = await connectHost(key, { hostId: "host-2", slots: 1, queue });
    first.send({ type: "released", assignmentId: assign.assignmentId, runId: run.id, exitCode: 1 });
    await first.settle();
    await advanceDispatcher(0, queue);
    expect((await second.next("assign")).runId).toBe(run.id);
    first.close();
    second.close();
  });
});

describe("hosts that leave and come back", () => {
  it("a host that disconnects is not judged: its claimed run stays with it, and a reconnect with `running` keeps it", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-blip", slots: 1, queue });
    const { run } = await createPoolRun({ queue });
    const assign = await takeAssignment(host, run.id);
    const { runner } = await claim(run.id, assign.runnerToken);
    host.close();
    await host.waitClosed();

    const stranger = await connectHost(key, { hostId: "host-stranger", slots: 1, queue });
    await stranger.settle();
    expect(stranger.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    expect(await getRun(run.id)).toMatchObject({ status: "running", poolHost: "host-blip" });

    const back = await connectHost(key, {
      hostId: "host-blip",
      slots: 1,
      queue,
      running: [{ assignmentId: assign.assignmentId, runId: run.id }],
    });
    const pools = await json(await call("/v1/pools"), 200);
    const listed = pools.hosts.find((entry: { hostId: string }) => entry.hostId === "host-blip");
    expect(listed).toMatchObject({ freeSlots: 0, runs: [{ runId: run.id, assignmentId: assign.assignmentId }] });
    await back.settle();
    expect(back.frames.filter((frame) => frame.type === "assign" || frame.type === "revoke")).toEqual([]);
    for (const socket of [stranger, back, runner]) socket.close();
  });

  it("the same hostId connecting again replaces its older socket", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const older = await connectHost(key, { hostId: "host-twice", queue });
    const newer = await connectHost(key, { hostId: "host-twice", queue });
    expect((await older.waitClosed()).code).toBe(4004);
    const { run } = await createPoolRun({ queue });
    expect((await newer.next("assign")).runId).toBe(run.id);
    newer.close();
  });

  it("a dispatcher restarted mid-dispatch loses no run and assigns none twice", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-restart", slots: 3, queue });
    const runs = [await createPoolRun({ queue }), await createPoolRun({ queue }), await createPoolRun({ queue })];
    const held = await takeAssignment(host, runs[0]?.run.id);
    const claimed = await claim(held.runId, held.runnerToken);
    const unclaimed = [await host.next("assign"), await host.next("assign")];
    await evictDurableObject(dispatcherObject(queue), { webSockets: "close" });
    await host.waitClosed();

    // The host comes back with only the bridge that claimed; the two it never started are taken back.
    const back = await connectHost(key, {
      hostId: "host-restart",
      slots: 3,
      queue,
      running: [{ assignmentId: held.assignmentId, runId: held.runId }],
    });
    await advanceDispatcher(0, queue);
    const again = [await back.next("assign"), await back.next("assign")];
    expect(again.map((frame) => frame.runId).sort()).toEqual(unclaimed.map((frame) => frame.runId).sort());
    await back.settle();
    expect(back.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    expect(await json(await call(`/v1/queues/${queue}`), 200)).toMatchObject({ depth: 0, running: 3, freeSlots: 0 });
    back.close();
    claimed.runner.close();
  });
});

describe("silent hosts", () => {
  it("a host that sent nothing for three heartbeat intervals is closed and offered nothing; its runs stay", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const silent = await connectHost(key, { hostId: "host-silent", slots: 2, queue });
    const { run: held } = await createPoolRun({ queue });
    const assign = await takeAssignment(silent, held.id);
    const { runner } = await claim(held.id, assign.runnerToken);
    // Ninety-one seconds of silence, as its socket remembers it.
    await runInDurableObject(dispatcherObject(queue), (_instance, state) => {
      for (const ws of state.getWebSockets("host")) {
        const attachment = ws.deserializeAttachment() as Record<string, unknown>;
        ws.serializeAttachment({ ...attachment, lastSeenAt: Date.now() - 91_000 });
      }
    });
    const { run: next } = await createPoolRun({ queue });
    expect((await silent.waitClosed()).code).toBe(4005);
    expect(await getRun(next.id)).toMatchObject({
      dispatch: { reason: 'no connected pool host serves profile "demo"' },
    });
    expect(await getRun(held.id)).toMatchObject({ status: "running", poolHost: "host-silent" });
    const fresh = await connectHost(key, { hostId: "host-fresh", slots: 1, queue });
    expect((await fresh.next("assign")).runId).toBe(next.id);
    fresh.close();
    runner.close();
  });
});
