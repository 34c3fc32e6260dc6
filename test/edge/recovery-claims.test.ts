import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { allEvents, getRun, json, runObject, timers } from "./helpers.ts";
import { lose, recover, runWith, session } from "./recovery-helpers.ts";
import { agentEvent, connectRunner } from "./sockets.ts";

/** A run lost with its sandbox, recovering in the mode its evidence gives. */
async function lost(mode: "restart" | "resume" | "ambiguous") {
  const live =
    mode === "restart"
      ? await runWith([])
      : mode === "resume"
        ? await runWith([session(1), agentEvent(2)], 2)
        : await runWith([session(1), agentEvent(2)], 1);
  live.runner.close();
  await lose(live.runId);
  expect((await getRun(live.runId)).recovery?.mode).toBe(mode);
  return live;
}

/** Says hello (naming `generation` if given, as a resume if asked) and answers the first verdict frame. */
async function hello(runId: string, token: string, generation?: number, runnerId = "fresh-sandbox", resume = false) {
  const runner = await connectRunner(runId, token);
  const named = generation === undefined ? {} : { generation };
  runner.send({ type: "hello", runnerId, ...named, ...(resume ? { resume: true } : {}) });
  const verdict = await runner.next(["claimed", "rejected", "fenced"]);
  return { runner, verdict };
}

const rejected = (mode: string) => ({ type: "rejected", reason: "recovering", status: "recovering", mode });

describe("claims while recovering", () => {
  it("restart, nothing stored: a plain hello claims generation 1 from scratch", async () => {
    const live = await lost("restart");
    const { verdict } = await hello(live.runId, live.runnerToken);
    expect(verdict).toMatchObject({ type: "claimed", epoch: 2, generation: 1, ackedSourceSeq: 0 });
    expect(await getRun(live.runId)).toMatchObject({ status: "running", generation: 1, recovery: null });
    expect((await timers(live.runId)).map((t) => t.kind)).not.toContain("recover");
    expect((await allEvents(live.runId)).filter((e) => e.type === "run.generation.started")).toEqual([]);
  });

  it("restart: a hello naming a generation is refused (a resuming bridge must not restore into a restart)", async () => {
    const live = await lost("restart");
    const { runner, verdict } = await hello(live.runId, live.runnerToken, 2);
    expect(verdict).toEqual(rejected("restart"));
    expect((await runner.waitClosed()).code).toBe(4002);
    expect((await getRun(live.runId)).status).toBe("recovering");
  });

  it("restart chosen after events were stored: a plain hello starts the next generation from scratch", async () => {
    const live = await lost("ambiguous");
    await json(await recover(live.runId, "restart", "op-1"), 201);
    const { verdict } = await hello(live.runId, live.runnerToken);
    expect(verdict).toMatchObject({ type: "claimed", generation: 2, ackedSourceSeq: 0 });
    const started = (await allEvents(live.runId)).filter((e) => e.type === "run.generation.started");
    expect(started.map((e) => e.data)).toEqual([{ generation: 2, previous: 1, mode: "restart", nativeSession: null }]);
  });

  it("resume: only a hello naming the next generation claims; plain, current or later ones are refused", async () => {
    const live = await lost("resume");
    for (const generation of [undefined, 1, 3]) {
      const { runner, verdict } = await hello(live.runId, live.runnerToken, generation);
      expect(verdict, `hello with generation ${generation}`).toEqual(rejected("resume"));
      expect((await runner.waitClosed()).code).toBe(4002);
    }
    const before = await allEvents(live.runId);
    const { verdict } = await hello(live.runId, live.runnerToken, 2);
    expect(verdict).toMatchObject({ type: "claimed", generation: 2, ackedSourceSeq: 0, commands: [] });
    expect(await getRun(live.runId)).toMatchObject({ status: "running", generation: 2, highestSourceSeq: 0 });
    const added = (await allEvents(live.runId)).slice(before.length);
    expect(added.map((e) => [e.type, e.data])).toEqual([
      [
        "run.generation.started",
        { generation: 2, previous: 1, mode: "resume", nativeSession: { provider: "codex", id: "thread-1" } },
      ],
      [
        "run.claimed",
        {
          epoch: verdict.epoch,
          runnerId: "fresh-sandbox",
          previousEpoch: live.epoch,
          unknownCommands: 0,
          generation: 2,
        },
      ],
    ]);
  });

  it("recovery is durable: an object evicted while recovering wakes in the same mode and takes the resume", async () => {
    const live = await lost("resume");
    await evictDurableObject(runObject(live.runId), { webSockets: "close" });
    expect((await getRun(live.runId)).recovery?.mode).toBe("resume");
    expect((await hello(live.runId, live.runnerToken)).verdict).toEqual(rejected("resume"));
    expect((await hello(live.runId, live.runnerToken, 2)).verdict).toMatchObject({ type: "claimed", generation: 2 });
  });

  it("ambiguous: every hello is refused until an operator decides", async () => {
    const live = await lost("ambiguous");
    for (const generation of [undefined, 2]) {
      expect((await hello(live.runId, live.runnerToken, generation)).verdict).toEqual(rejected("ambiguous"));
    }
    await json(await recover(live.runId, "resume", "op-1"), 201);
    expect((await hello(live.runId, live.runnerToken)).verdict).toEqual(rejected("resume"));
    expect((await hello(live.runId, live.runnerToken, 2)).verdict).toMatchObject({ type: "claimed", generation: 2 });
  });
});

describe("claims outside recovery", () => {
  it("a hello naming a later generation than the current is refused not-resumable", async () => {
    const live = await runWith([agentEvent(1)]);
    const { runner, verdict } = await hello(live.runId, live.runnerToken, 2);
    expect(verdict).toEqual({ type: "rejected", reason: "not-resumable", status: "running" });
    expect((await runner.waitClosed()).code).toBe(4002);
    expect((await getRun(live.runId)).epoch).toBe(live.epoch);
  });

  it("a hello naming the current generation is an ordinary takeover", async () => {
    const live = await runWith([agentEvent(1), agentEvent(2)]);
    const { verdict } = await hello(live.runId, live.runnerToken, 1, "successor");
    expect(verdict).toMatchObject({ type: "claimed", epoch: live.epoch + 1, generation: 1, ackedSourceSeq: 2 });
  });

  it("a late bridge of generation 1 is fenced once generation 2 runs, and stores nothing", async () => {
    const live = await lost("resume");
    const resumed = await hello(live.runId, live.runnerToken, 2);
    const before = await allEvents(live.runId);
    const late = await hello(live.runId, live.runnerToken, 1, "old-sandbox");
    expect(late.verdict).toEqual({ type: "fenced", epoch: resumed.verdict.epoch });
    expect((await late.runner.waitClosed()).code).toBe(4001);
    const stale = await connectRunner(live.runId, live.runnerToken);
    stale.send({ type: "events", epoch: live.epoch, generation: 1, events: [agentEvent(3)] });
    expect(await stale.next("error")).toMatchObject({ code: "not_claimed" });
    expect(await allEvents(live.runId)).toEqual(before);
    expect((await getRun(live.runId)).epoch).toBe(resumed.verdict.epoch);
  });

  it("an events frame naming another generation than the claimed one is fenced and stores nothing", async () => {
    const live = await lost("resume");
    const { runner, verdict } = await hello(live.runId, live.runnerToken, 2);
    const before = await allEvents(live.runId);
    runner.send({ type: "events", epoch: verdict.epoch, events: [agentEvent(1)] });
    expect(await runner.next("fenced")).toEqual({ type: "fenced", epoch: verdict.epoch });
    expect(await allEvents(live.runId)).toEqual(before);
  });

  it("a second resume of a generation already resumed is refused; the first keeps its claim", async () => {
    const live = await lost("resume");
    const first = await hello(live.runId, live.runnerToken, 2, "sandbox-a", true);
    expect(first.verdict).toMatchObject({ type: "claimed", generation: 2 });
    const second = await hello(live.runId, live.runnerToken, 2, "sandbox-b", true);
    expect(second.verdict).toEqual({ type: "rejected", reason: "not-resumable", status: "running" });
    expect((await second.runner.waitClosed()).code).toBe(4002);
    expect(await getRun(live.runId)).toMatchObject({ epoch: first.verdict.epoch, generation: 2, status: "running" });
    first.runner.send({ type: "events", epoch: first.verdict.epoch, generation: 2, events: [agentEvent(1)] });
    expect(await first.runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 1 });
    const gen2 = (await allEvents(live.runId)).filter((e) => e.source === "runner" && e.generation === 2);
    expect(gen2.map((e) => [e.sourceSeq, e.type])).toEqual([[1, "TEXT_MESSAGE_CONTENT"]]);
    expect((await allEvents(live.runId)).filter((e) => e.type === "run.claimed")).toHaveLength(2);
  });

  it("a resume whose claimed was cut off says the same hello again and gets its own claim back", async () => {
    const live = await lost("resume");
    const first = await hello(live.runId, live.runnerToken, 2, "sandbox-a", true);
    first.runner.close();
    const again = await hello(live.runId, live.runnerToken, 2, "sandbox-a", true);
    expect(again.verdict).toMatchObject({ type: "claimed", epoch: first.verdict.epoch + 1, generation: 2 });
  });

  it("a successor bridge of a resumed generation (naming it, no epoch, not a resume) takes it over", async () => {
    const live = await lost("resume");
    const resumed = await hello(live.runId, live.runnerToken, 2, "sandbox-a", true);
    const { verdict } = await hello(live.runId, live.runnerToken, 2, "successor");
    expect(verdict).toMatchObject({ type: "claimed", epoch: resumed.verdict.epoch + 1, generation: 2 });
  });
});
