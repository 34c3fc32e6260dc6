import { describe, expect, it } from "vitest";
import { allEvents, call, getRun, json } from "./helpers.ts";
import { lose, recover, runWith, session } from "./recovery-helpers.ts";
import { agentEvent } from "./sockets.ts";

/** Lost with events after its checkpoint: ambiguous, yet resumable by an operator's choice. */
async function ambiguous() {
  const live = await runWith([session(1), agentEvent(2), agentEvent(3)], 2);
  live.runner.close();
  await lose(live.runId);
  expect((await getRun(live.runId)).recovery?.mode).toBe("ambiguous");
  return live;
}

const decided = async (runId: string) =>
  (await allEvents(runId)).filter((e) => e.type === "run.recovery.decided").map((e) => e.data);

describe("POST /v1/runs/:id/recover", () => {
  it("resume sets the mode and answers the run; the same commandId again is 200 with the same decision", async () => {
    const live = await ambiguous();
    const first = await json(await recover(live.runId, "resume", "op-1"), 201);
    expect(first).toMatchObject({
      created: true,
      decision: { action: "resume", commandId: "op-1" },
      run: { status: "recovering", recovery: { mode: "resume", reason: "an operator chose resume (op-1)" } },
    });
    const repeat = await json(await recover(live.runId, "resume", "op-1"), 200);
    expect(repeat).toMatchObject({ created: false, decision: first.decision, run: { recovery: first.run.recovery } });
    expect(await decided(live.runId)).toEqual([{ action: "resume", commandId: "op-1" }]);
  });

  it("the same commandId with another action is a conflict", async () => {
    const live = await ambiguous();
    await json(await recover(live.runId, "restart", "op-1"), 201);
    const answer = await json(await recover(live.runId, "fail", "op-1"), 409);
    expect(answer.error).toEqual({ code: "conflict", message: "recovery decision op-1 was restart, not fail" });
  });

  it("two different decisions at once: exactly one wins (201), the other is 409, and the run follows the winner", async () => {
    const live = await ambiguous();
    const [a, b] = await Promise.all([recover(live.runId, "resume", "op-a"), recover(live.runId, "fail", "op-b")]);
    const answers = [
      { action: "resume", status: a.status, body: await a.json<any>() },
      { action: "fail", status: b.status, body: await b.json<any>() },
    ];
    expect(answers.map((x) => x.status).sort()).toEqual([201, 409]);
    const winner = answers.find((x) => x.status === 201);
    const loser = answers.find((x) => x.status === 409);
    expect(loser?.body.error.code).toBe("conflict");
    expect(await decided(live.runId)).toEqual([winner?.body.decision]);
    expect((await getRun(live.runId)).status).toBe(winner?.action === "fail" ? "failed" : "recovering");
  });

  it("fail ends the run failed (recovery_declined) after recording the decision", async () => {
    const live = await ambiguous();
    const answer = await json(await recover(live.runId, "fail", "op-1"), 201);
    expect(answer.run).toMatchObject({
      status: "failed",
      recovery: null,
      outcome: { status: "failed", error: { code: "recovery_declined" } },
    });
    const tail = (await allEvents(live.runId)).slice(-2).map((e) => e.type);
    expect(tail).toEqual(["run.recovery.decided", "run.finished"]);
    expect((await json(await recover(live.runId, "restart", "op-2"), 409)).error.code).toBe("conflict");
    expect((await json(await recover(live.runId, "fail", "op-1"), 200)).created).toBe(false);
  });

  it("only a recovering run takes a decision: 409 not_recovering", async () => {
    const live = await runWith([session(1)]);
    const answer = await json(await recover(live.runId, "restart", "op-1"), 409);
    expect(answer.error).toEqual({
      code: "not_recovering",
      message: "run is running; only a recovering run takes a recovery decision",
    });
    expect(await decided(live.runId)).toEqual([]);
  });

  it("resume needs an agent session and a checkpoint: 409 not_resumable, and nothing changes", async () => {
    const noSession = await runWith([agentEvent(1)]);
    noSession.runner.close();
    await lose(noSession.runId);
    const before = await getRun(noSession.runId);
    expect((await json(await recover(noSession.runId, "resume", "op-1"), 409)).error).toEqual({
      code: "not_resumable",
      message: "the run cannot be resumed: no agent session was reported and no checkpoint was uploaded",
    });
    expect(await getRun(noSession.runId)).toEqual(before);
    const noCheckpoint = await runWith([session(1)]);
    noCheckpoint.runner.close();
    await lose(noCheckpoint.runId);
    expect((await json(await recover(noCheckpoint.runId, "resume", "op-1"), 409)).error.message).toBe(
      "the run cannot be resumed: no checkpoint was uploaded",
    );
    // Refused decisions are not decisions: another may still be taken.
    expect((await json(await recover(noCheckpoint.runId, "restart", "op-2"), 201)).run.recovery.mode).toBe("restart");
  });

  it("an interacting viewer token may decide; a read-only viewer or the runner token may not", async () => {
    const live = await ambiguous();
    const minted = await json(
      await call(`/v1/runs/${live.runId}/tokens`, { method: "POST", json: { role: "viewer", interact: true } }),
      201,
    );
    const body = { action: "restart", commandId: "op-1" };
    const as = (key: string) => call(`/v1/runs/${live.runId}/recover`, { method: "POST", json: body, key });
    expect((await as(live.viewerToken)).status).toBe(403);
    expect((await as(live.runnerToken)).status).toBe(403);
    expect((await as(minted.token)).status).toBe(201);
  });
});
