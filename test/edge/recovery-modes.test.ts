import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { allEvents, call, getRun, json, runObject, timers, travel } from "./helpers.ts";
import { LOSABLE, lose, runWith, session } from "./recovery-helpers.ts";
import { agentEvent, watch } from "./sockets.ts";

const recovering = async (runId: string) => (await allEvents(runId)).filter((e) => e.type === "run.recovering");

describe("the takeover window passing decides a recovery mode from the evidence", () => {
  it("restart: no agent session and no runner event was ever stored", async () => {
    const live = await runWith([]);
    live.runner.close();
    await lose(live.runId);
    const run = await getRun(live.runId);
    const reason = "no agent session was reported and no runner event stored: starting over is safe";
    expect(run).toMatchObject({
      status: "recovering",
      generation: 1,
      outcome: null,
      recovery: { mode: "restart", reason },
    });
    const since = Date.parse(run.recovery?.since ?? "");
    expect(Date.parse(run.recovery?.deadline ?? "")).toBe(since + LOSABLE.recoverMs);
    expect((await recovering(live.runId)).map((e) => e.data)).toEqual([{ mode: "restart", reason, generation: 1 }]);
    expect((await timers(live.runId)).map((t) => t.kind)).toEqual(["deadline", "idle", "recover"]);
  });

  it("ambiguous: runner events but no agent session", async () => {
    const live = await runWith([agentEvent(1), agentEvent(2)]);
    live.runner.close();
    await lose(live.runId);
    expect((await getRun(live.runId)).recovery).toMatchObject({
      mode: "ambiguous",
      reason: "runner events were stored but no agent session was reported",
    });
  });

  it("ambiguous: an agent session with no checkpoint", async () => {
    const live = await runWith([session(1), agentEvent(2)]);
    live.runner.close();
    await lose(live.runId);
    const run = await getRun(live.runId);
    expect(run.nativeSession).toEqual({ provider: "codex", id: "thread-1" });
    expect(run.recovery).toMatchObject({ mode: "ambiguous", reason: "the agent session has no checkpoint" });
  });

  it("resume: an agent session and a checkpoint covering every stored event", async () => {
    const live = await runWith([session(1), agentEvent(2), agentEvent(3)], 3);
    live.runner.close();
    await lose(live.runId);
    expect((await getRun(live.runId)).recovery).toMatchObject({
      mode: "resume",
      reason: "the checkpoint covers every stored event of the agent session",
    });
  });

  it("ambiguous: events after the checkpoint", async () => {
    const live = await runWith([session(1), agentEvent(2), agentEvent(3)], 2);
    live.runner.close();
    await lose(live.runId);
    expect((await getRun(live.runId)).recovery).toMatchObject({
      mode: "ambiguous",
      reason: "events after the checkpoint: it covers sourceSeq 2, 3 are stored",
    });
  });

  it("the last agent.session wins; one without a provider and an id is not a session", async () => {
    const live = await runWith([
      session(1, "first"),
      agentEvent(2, "agent.session", { id: "no-provider" }),
      session(3, "second", "claude-code"),
      agentEvent(4, "agent.session", { provider: "codex", id: 7 }),
    ]);
    expect((await getRun(live.runId)).nativeSession).toEqual({ provider: "claude-code", id: "second" });
  });
});

describe("while recovering", () => {
  it("recoverMs passing with nobody recovering fails the run runner_lost, and viewers see it end", async () => {
    const live = await runWith([session(1)]);
    live.runner.close();
    await lose(live.runId);
    const viewer = await watch(live.runId, live.viewerToken, 0);
    await viewer.next("status", (f) => f.status === "recovering");
    await travel(live.runId, LOSABLE.recoverMs);
    expect(await runDurableObjectAlarm(runObject(live.runId))).toBe(true);
    const run = await getRun(live.runId);
    expect(run).toMatchObject({
      status: "failed",
      recovery: null,
      outcome: {
        status: "failed",
        error: { code: "runner_lost", message: `no runner recovered the run within ${LOSABLE.recoverMs} ms` },
      },
    });
    expect((await allEvents(live.runId)).at(-1)).toMatchObject({
      type: "run.finished",
      data: { outcome: run.outcome },
    });
    expect(await viewer.next("end")).toEqual({ type: "end", status: "failed" });
    const listed = await json(await call("/v1/runs?status=failed&limit=200"), 200);
    expect(listed.runs.map((r: { runId: string }) => r.runId)).toContain(live.runId);
  });

  it("the tenant's list shows recovering runs, and filters by it", async () => {
    const live = await runWith([]);
    live.runner.close();
    await lose(live.runId);
    const listed = await json(await call("/v1/runs?status=recovering&limit=200"), 200);
    expect(listed.runs.find((r: { runId: string }) => r.runId === live.runId)).toMatchObject({ status: "recovering" });
  });

  it("a cancel ends the run cancelled at once: there is no runner to confirm it", async () => {
    const live = await runWith([session(1)]);
    live.runner.close();
    await lose(live.runId);
    const answer = await json(
      await call(`/v1/runs/${live.runId}/cancel`, { method: "POST", json: { commandId: "stop", reason: "give up" } }),
      202,
    );
    expect(answer.command).toMatchObject({ commandId: "stop", state: "applied" });
    expect(answer.run).toMatchObject({
      status: "cancelled",
      recovery: null,
      outcome: { error: { code: "cancelled" } },
    });
    expect((await timers(live.runId)).map((t) => t.kind)).toEqual(["retention"]);
  });

  it("the lapsed claim's runner is fenced: its events, heartbeats and outcome change nothing", async () => {
    const live = await runWith([session(1)]);
    await lose(live.runId);
    const before = { events: await allEvents(live.runId), run: await getRun(live.runId) };
    live.runner.send({ type: "events", epoch: live.epoch, events: [agentEvent(2)] });
    expect(await live.runner.next("fenced")).toEqual({ type: "fenced", epoch: live.epoch });
    expect(await allEvents(live.runId)).toEqual(before.events);
    expect({ ...(await getRun(live.runId)), runner: null }).toEqual({ ...before.run, runner: null });
  });
});
