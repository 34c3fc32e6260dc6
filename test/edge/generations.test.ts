import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { advance, allEvents, call, expectGapless, getRun, json, KEY_A, timers } from "./helpers.ts";
import { type LiveRun, lose, patterned, putCheckpoint, runWith, session } from "./recovery-helpers.ts";
import { agentEvent, connectRunner, watch } from "./sockets.ts";

/** Claims generation `generation` of a run recovering in resume mode, as `runner-bridge resume` does. */
async function resume(live: LiveRun, generation = 2, runnerId = "new-sandbox") {
  const runner = await connectRunner(live.runId, live.runnerToken);
  runner.send({ type: "hello", runnerId, generation });
  const claimed = await runner.next("claimed");
  return { runner, claimed, epoch: claimed.epoch as number };
}

/** Generation 1 stored `events`, checkpointed all of them, then its sandbox was lost: recovering, resume. */
async function lostAfter(events: ReturnType<typeof agentEvent>[], timeouts: Record<string, number> = {}) {
  const live = await runWith(events, events.length, timeouts);
  live.runner.close();
  await lose(live.runId);
  expect((await getRun(live.runId)).recovery?.mode).toBe("resume");
  return live;
}

const post = (runId: string, path: string, body: unknown) =>
  call(`/v1/runs/${runId}/${path}`, { method: "POST", json: body });

describe("a new generation", () => {
  it("expires the old generation's pending approvals (generation_replaced); deciding one is 409 stale", async () => {
    const live = await lostAfter([session(1), agentEvent(2, "approval.requested", { requestId: "req-1" })]);
    expect((await getRun(live.runId)).pendingApprovals.map((a) => a.requestId)).toEqual(["req-1"]);
    const g2 = await resume(live);
    const run = await getRun(live.runId);
    expect(run).toMatchObject({ status: "running", generation: 2, pendingApprovals: [] });
    const expired = (await allEvents(live.runId)).filter((e) => e.type === "approval.expired");
    expect(expired.map((e) => [e.epoch, e.data])).toEqual([
      [g2.epoch, { requestId: "req-1", reason: "generation_replaced" }],
    ]);
    expect((await timers(live.runId)).map((t) => t.kind)).not.toContain("approval");
    const decision = await json(await post(live.runId, "approvals/req-1", { decision: "approve" }), 409);
    expect(decision.error).toEqual({ code: "stale", message: "approval req-1 is already expired" });
    expect(g2.claimed.commands).toEqual([]);
  });

  it("an old generation's approval that timed out while recovering sends its deny to nobody", async () => {
    const asking = [session(1), agentEvent(2, "approval.requested", { requestId: "req-1" })];
    const live = await lostAfter(asking, { approvalMs: 30_000 });
    await advance(live.runId, 30_000);
    const expired = (await allEvents(live.runId)).filter((e) => e.type === "approval.expired");
    expect(expired.map((e) => e.data)).toEqual([{ requestId: "req-1", decision: "deny", reason: "approval_timeout" }]);
    const g2 = await resume(live);
    expect(g2.claimed.commands).toEqual([]);
    const decision = await json(await post(live.runId, "approvals/req-1", { decision: "deny" }), 409);
    expect(decision.error.code).toBe("stale");
  });

  it("a replayed cancel naming generation 1 is 409 stale and leaves generation 2 running", async () => {
    const live = await lostAfter([session(1)]);
    const g2 = await resume(live);
    const before = await allEvents(live.runId);
    const message = "generation 1 is not the run's current generation (2)";
    const viaCommands = await json(
      await post(live.runId, "commands", { commandId: "cancel-1", type: "cancel", generation: 1 }),
      409,
    );
    expect(viaCommands.error).toEqual({ code: "stale", message });
    const viaCancel = await json(await post(live.runId, "cancel", { commandId: "cancel-1", generation: 1 }), 409);
    expect(viaCancel.error).toEqual({ code: "stale", message });
    const operator = await watch(live.runId, null, 0, KEY_A);
    operator.send({ type: "command", command: { commandId: "cancel-1", type: "cancel", generation: 1 } });
    expect(await operator.next("error")).toEqual({ type: "error", code: "stale", message });
    operator.close();
    expect(await allEvents(live.runId)).toEqual(before);
    expect((await getRun(live.runId)).status).toBe("running");
    // Naming the current generation reaches it, marked with it.
    await json(
      await post(live.runId, "commands", { commandId: "in-2", type: "input", text: "go", generation: 2 }),
      201,
    );
    expect(await g2.runner.next("command")).toMatchObject({ commandId: "in-2", generation: 2, state: "delivered" });
    expect(g2.runner.frames.filter((f) => f.type === "command")).toEqual([]);
  });

  it("commands the old generation got and never confirmed become unknown and are not sent to the new one", async () => {
    const live = await runWith([session(1)], 1);
    await json(await post(live.runId, "commands", { commandId: "sent-to-1", type: "input", text: "a" }), 201);
    await live.runner.next("command");
    live.runner.close();
    await lose(live.runId);
    await json(await post(live.runId, "commands", { commandId: "while-lost", type: "input", text: "b" }), 201);
    const g2 = await resume(live);
    expect(g2.claimed.commands).toEqual([
      expect.objectContaining({ commandId: "while-lost", state: "queued", generation: 2 }),
    ]);
    const record = async (commandId: string, text: string) =>
      (await json(await post(live.runId, "commands", { commandId, type: "input", text }), 200)).command;
    expect(await record("sent-to-1", "a")).toMatchObject({ state: "unknown", generation: 1 });
    expect(await record("while-lost", "b")).toMatchObject({ state: "delivered", generation: 2 });
  });

  it("judges dedupe, conflict and gap per (generation, sourceSeq)", async () => {
    const live = await lostAfter([session(1), agentEvent(2)]);
    const g2 = await resume(live);
    const send = (events: ReturnType<typeof agentEvent>[]) =>
      g2.runner.send({ type: "events", epoch: g2.epoch, generation: 2, events });
    // The same sourceSeq and content as generation 1's is a new event of generation 2.
    send([agentEvent(1)]);
    expect(await g2.runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 1 });
    send([agentEvent(1)]);
    expect(await g2.runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 1 });
    send([agentEvent(1, "TEXT_MESSAGE_CONTENT", { delta: "other" })]);
    expect(await g2.runner.next("conflict")).toEqual({ type: "conflict", sourceSeq: 1 });
    send([agentEvent(3)]);
    expect(await g2.runner.next("gap")).toEqual({ type: "gap", expected: 2 });
    const runner = (await allEvents(live.runId)).filter((e) => e.source === "runner");
    expect(runner.map((e) => [e.generation, e.sourceSeq, e.type])).toEqual([
      [1, 1, "agent.session"],
      [1, 2, "TEXT_MESSAGE_CONTENT"],
      [2, 1, "TEXT_MESSAGE_CONTENT"],
    ]);
    expect((await getRun(live.runId)).highestSourceSeq).toBe(1);
  });

  it("viewers see one gapless seq across generations, the stored transcript element for element", async () => {
    const live = await runWith([session(1), agentEvent(2)], 2);
    const viewer = await watch(live.runId, live.viewerToken, 0);
    live.runner.close();
    await lose(live.runId);
    const g2 = await resume(live);
    g2.runner.send({ type: "events", epoch: g2.epoch, generation: 2, events: [session(1), agentEvent(2)] });
    await g2.runner.next("ack");
    g2.runner.send({ type: "complete", epoch: g2.epoch, outcome: { status: "succeeded" } });
    await g2.runner.next("completed");
    await viewer.next("end");
    const seen = viewer.frames.filter((f) => f.type === "events").flatMap((f) => f.events as RunEvent[]);
    const stored = await allEvents(live.runId);
    expect(seen).toEqual(stored);
    expectGapless(stored);
    expect(stored.filter((e) => e.source === "runner").map((e) => [e.generation, e.sourceSeq])).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
      [2, 2],
    ]);
    expect(stored.map((e) => e.type)).toEqual([
      "run.created",
      "run.claimed",
      "agent.session",
      "TEXT_MESSAGE_CONTENT",
      "run.checkpoint",
      "run.stalled",
      "run.recovering",
      "run.generation.started",
      "run.claimed",
      "agent.session",
      "TEXT_MESSAGE_CONTENT",
      "run.finished",
    ]);
  });

  it("within generation 2 a takeover keeps it; lost again with only generation 1's checkpoint it is ambiguous", async () => {
    const live = await lostAfter([session(1)]);
    const g2 = await resume(live);
    g2.runner.send({ type: "events", epoch: g2.epoch, generation: 2, events: [session(1, "thread-2"), agentEvent(2)] });
    await g2.runner.next("ack");
    const successor = await connectRunner(live.runId, live.runnerToken);
    successor.send({ type: "hello", runnerId: "successor" });
    expect(await successor.next("claimed")).toMatchObject({ generation: 2, ackedSourceSeq: 2 });
    successor.close();
    await lose(live.runId);
    expect((await getRun(live.runId)).recovery).toMatchObject({
      mode: "ambiguous",
      reason: "the checkpoint is of generation 1; the run is at 2",
    });
    expect((await getRun(live.runId)).checkpoint).toMatchObject({ generation: 1, sourceSeq: 1 });
  });

  it("generation 2, checkpointed and lost in turn, resumes as generation 3 from its own checkpoint", async () => {
    const live = await lostAfter([session(1)]);
    const g2 = await resume(live);
    g2.runner.send({ type: "events", epoch: g2.epoch, generation: 2, events: [session(1, "thread-2"), agentEvent(2)] });
    await g2.runner.next("ack");
    const upload = { epoch: g2.epoch, generation: 2, sourceSeq: 2, body: patterned(64, 2) };
    await json(await putCheckpoint(live.runId, live.runnerToken, upload), 201);
    g2.runner.close();
    await lose(live.runId);
    const state = await json(await call(`/v1/runs/${live.runId}/recovery`, { key: live.runnerToken }), 200);
    expect(state).toMatchObject({
      status: "recovering",
      generation: 2,
      mode: "resume",
      nativeSession: { provider: "codex", id: "thread-2" },
      checkpoint: { generation: 2, sourceSeq: 2, bytes: 64 },
    });
    const g3 = await resume(live, 3);
    expect(g3.claimed).toMatchObject({ generation: 3, ackedSourceSeq: 0 });
    g3.runner.send({ type: "events", epoch: g3.epoch, generation: 3, events: [agentEvent(1)] });
    expect(await g3.runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 1 });
    const runner = (await allEvents(live.runId)).filter((e) => e.source === "runner");
    expect(runner.map((e) => [e.generation, e.sourceSeq])).toEqual([
      [1, 1],
      [2, 1],
      [2, 2],
      [3, 1],
    ]);
    const started = (await allEvents(live.runId)).filter((e) => e.type === "run.generation.started");
    expect(
      started.map((e) => [(e.data as { generation: number }).generation, (e.data as { previous: number }).previous]),
    ).toEqual([
      [2, 1],
      [3, 2],
    ]);
  });

  it("outside recovery the recovery state has no mode", async () => {
    const live = await runWith([session(1)]);
    const state = await json(await call(`/v1/runs/${live.runId}/recovery`, { key: live.runnerToken }), 200);
    expect(state).toEqual({
      status: "running",
      generation: 1,
      mode: null,
      nativeSession: { provider: "codex", id: "thread-1" },
      checkpoint: null,
    });
    expect((await call(`/v1/runs/${live.runId}/recovery`)).status).toBe(403);
  });
});
