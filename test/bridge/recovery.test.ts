import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { resumeArgs, runArgs, tempDir } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";
import { checkpointCovering, recovering, transcript, wipeSandbox } from "./harness/sandbox.ts";

// Issue 10, tests 3–6: which recovery the evidence allows after the sandbox is lost, what an
// operator may decide, what becomes of the old generation, and the recover deadline. ndjson
// agents (test/bridge/fixtures/scripted-agent.mjs) keep their own checkpoint file (--checkpoint).

const t = useEdge();
const TIMEOUTS = { heartbeatMs: 2000, takeoverMs: 300, recoverMs: 60_000 };
const line = (value: unknown) => ({ out: JSON.stringify(value) });
const session = (id: string) => line({ type: "agent.session", provider: "scripted", id });

/** Creates a run and starts `runner-bridge run` for it in a fresh sandbox directory. */
async function start(steps: unknown[], o: { extra?: string[]; timeouts?: Record<string, number> } = {}) {
  const created = await t.api.createRun({ timeouts: o.timeouts ?? TIMEOUTS });
  const dir = t.runDir();
  const bridge = t.bridge(
    runArgs({
      edge: t.edge.url,
      runId: created.run.id,
      token: created.runnerToken,
      dir,
      agent: t.agent(steps),
      ...(o.extra ? { extra: o.extra } : {}),
    }),
  );
  return { runId: created.run.id, token: created.runnerToken, dir, bridge };
}

function resume(runId: string, token: string, steps: unknown[], extra: string[] = []) {
  return t.bridge(resumeArgs({ edge: t.edge.url, runId, token, dir: t.runDir(), extra, agent: t.agent(steps) }));
}

async function runnerEventCount(runId: string, n: number) {
  await waitFor(`${n} runner events to be stored`, async () => (await t.api.runnerEvents(runId)).length >= n);
}

const recover = (runId: string, action: string, commandId: string) =>
  t.api.request("POST", `/v1/runs/${runId}/recover`, { action, commandId });

describe("lost before any agent session: restart", () => {
  it("resume is refused with exit 6; a plain run starts the agent afresh, in generation 1, and succeeds", async () => {
    const started = marker("started");
    const { runId, token, dir, bridge } = await start([{ touch: started }, { sleepForever: true }]);
    await waitFor("the agent to start", () => fs.existsSync(started));
    await t.api.waitForStatus(runId, "running");
    await wipeSandbox(bridge, dir);
    await recovering(t.api, runId, "restart");

    const refused = resume(runId, token, [{ out: "never" }]);
    expect(await refused.waitExit()).toBe(6);
    expect(refused.stderr()).toMatch(/not resumable: run \S+ is recovering in recovery mode restart/);

    const fresh = t.bridge(
      runArgs({ edge: t.edge.url, runId, token, dir: t.runDir(), agent: t.agent([{ out: "a fresh start" }]) }),
    );
    expect(await fresh.waitExit()).toBe(0);
    const { runnerRows, control } = await transcript(t.api, runId);
    expect(runnerRows).toEqual([[1, 1, "TEXT_MESSAGE_CHUNK"]]);
    expect(control).toEqual([
      "run.created",
      "run.claimed",
      "run.stalled",
      "run.recovering",
      "run.claimed",
      "run.finished",
    ]);
    expect(await t.api.getRun(runId)).toMatchObject({ status: "succeeded", generation: 1 });
  });
});

describe("events after the last checkpoint: ambiguous, an operator decides", () => {
  it("operator resume: the restored checkpoint and the session reach the next generation, which succeeds", async () => {
    const sandbox = tempDir("sandbox-1-");
    const own = path.join(sandbox, "state.txt");
    const goOn = marker("go-on");
    const { runId, token, dir, bridge } = await start(
      [
        session("s-4"),
        { write: [own, "after turn 1"] },
        line({ type: "RUN_FINISHED", threadId: "s-4", runId: "turn-1" }),
        { waitFile: goOn },
        { out: "more work after the checkpoint" },
        { sleepForever: true },
      ],
      { extra: ["--checkpoint", own] },
    );
    await checkpointCovering(t.api, runId, 1, 2); // the turn's end
    touch(goOn);
    await runnerEventCount(runId, 3);
    await wipeSandbox(bridge, dir, [sandbox]);
    const lost = await recovering(t.api, runId, "ambiguous");
    expect(lost.recovery?.reason).toMatch(/events after the checkpoint/);

    const early = resume(runId, token, [{ out: "never" }]);
    expect(await early.waitExit()).toBe(6);
    expect(early.stderr()).toMatch(/recovering in recovery mode ambiguous/);

    const decided = await recover(runId, "resume", "op-1");
    expect(decided.status).toBe(201);
    const again = await recover(runId, "resume", "op-1");
    expect(again.status).toBe(200);
    expect((await t.api.getRun(runId)).recovery?.mode).toBe("resume");

    const restored = path.join(tempDir("sandbox-2-"), "restored.txt");
    const second = resume(
      runId,
      token,
      [{ envEcho: ["AGENT_RESUME_SESSION"] }, { printFile: restored }],
      ["--checkpoint", restored],
    );
    expect(await second.waitExit()).toBe(0);
    const { runner, runnerRows, control, checkpoints } = await transcript(t.api, runId);
    expect(runnerRows).toEqual([
      [1, 1, "agent.session"],
      [1, 2, "RUN_FINISHED"],
      [1, 3, "TEXT_MESSAGE_CHUNK"],
      [2, 1, "CUSTOM"],
      [2, 2, "CUSTOM"],
    ]);
    expect(runner.slice(3).map((e) => e.data)).toEqual([
      { name: "env.echo", value: { vars: { AGENT_RESUME_SESSION: "s-4" } } },
      { name: "file.report", value: { path: restored, text: "after turn 1" } },
    ]);
    expect(control).toEqual([
      "run.created",
      "run.claimed",
      "run.stalled",
      "run.recovering",
      "run.recovery.decided",
      "run.generation.started",
      "run.claimed",
      "run.finished",
    ]);
    // One checkpoint, at the end of the turn; the timer (60 s by default) never fired.
    expect(checkpoints).toEqual([
      { digest: expect.stringMatching(/^sha256:/), generation: 1, sourceSeq: 2, bytes: expect.any(Number) },
    ]);
    expect(await t.api.getRun(runId)).toMatchObject({ status: "succeeded", generation: 2 });
  });

  it("operator fail ends the run failed; of two concurrent decisions one wins and the other is 409", async () => {
    const { runId, token, dir, bridge } = await start([session("s-4b"), { sleepForever: true }]);
    await runnerEventCount(runId, 1);
    await wipeSandbox(bridge, dir);
    const lost = await recovering(t.api, runId, "ambiguous");
    expect(lost.recovery?.reason).toMatch(/no checkpoint/);
    // A plain run would race the operator's decision: refused before it launches anything.
    const plainDir = t.runDir();
    const plain = t.bridge(
      runArgs({ edge: t.edge.url, runId, token, dir: plainDir, agent: t.agent([{ out: "never" }]) }),
    );
    expect(await plain.waitExit()).toBe(6);
    expect(plain.stderr()).toMatch(/recovering in mode ambiguous; an operator must decide first/);
    expect(fs.existsSync(plainDir)).toBe(false);

    const noCheckpoint = await recover(runId, "resume", "op-resume");
    expect(noCheckpoint).toMatchObject({ status: 409, body: { error: { code: "not_resumable" } } });
    const both = await Promise.all([recover(runId, "fail", "op-a"), recover(runId, "fail", "op-b")]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const loser = both.find((r) => r.status === 409);
    expect(loser?.body.error.code).toBe("conflict");
    const winner = both.find((r) => r.status === 201)?.body.decision.commandId as string;
    expect((await recover(runId, "fail", winner)).status).toBe(200);
    expect(await t.api.getRun(runId)).toMatchObject({
      status: "failed",
      outcome: { error: { code: "recovery_declined" } },
    });
  });
});

describe("an operator restarts a run that had a session", () => {
  it("a plain run then serves generation 2 from scratch, its events counted from sourceSeq 1", async () => {
    const { runId, token, dir, bridge } = await start([session("s-7"), { out: "half done" }, { sleepForever: true }]);
    await runnerEventCount(runId, 2);
    await wipeSandbox(bridge, dir);
    await recovering(t.api, runId, "ambiguous");
    expect((await recover(runId, "restart", "op-restart")).status).toBe(201);

    const fresh = t.bridge(
      runArgs({
        edge: t.edge.url,
        runId,
        token,
        dir: t.runDir(),
        agent: t.agent([session("s-8"), { out: "all done" }]),
      }),
    );
    expect(await fresh.waitExit()).toBe(0);
    const { events, runnerRows, control } = await transcript(t.api, runId);
    expect(runnerRows).toEqual([
      [1, 1, "agent.session"],
      [1, 2, "TEXT_MESSAGE_CHUNK"],
      [2, 1, "agent.session"],
      [2, 2, "TEXT_MESSAGE_CHUNK"],
    ]);
    expect(control).toEqual([
      "run.created",
      "run.claimed",
      "run.stalled",
      "run.recovering",
      "run.recovery.decided",
      "run.generation.started",
      "run.claimed",
      "run.finished",
    ]);
    expect(events.find((e) => e.type === "run.generation.started")?.data).toEqual({
      generation: 2,
      previous: 1,
      mode: "restart",
      nativeSession: null,
    });
    expect(await t.api.getRun(runId)).toMatchObject({
      status: "succeeded",
      generation: 2,
      nativeSession: { provider: "scripted", id: "s-8" },
    });
  });
});

describe("the old generation cannot touch the new one", () => {
  it("its pending approval expires and a decision for it is stale; a replayed cancel naming it changes nothing", async () => {
    const sandbox = tempDir("sandbox-1-");
    const own = path.join(sandbox, "state.txt");
    const { runId, token, dir, bridge } = await start(
      [
        session("s-5"),
        { write: [own, "asked to delete"] },
        line({ type: "approval.requested", requestId: "ap-1", toolName: "rm" }),
        { sleepForever: true },
      ],
      { extra: ["--checkpoint", own, "--checkpoint-interval", "150"] },
    );
    await waitFor("approval ap-1 to be pending", async () =>
      (await t.api.getRun(runId)).pendingApprovals.some((a) => a.requestId === "ap-1"),
    );
    await checkpointCovering(t.api, runId, 1, 2);
    await wipeSandbox(bridge, dir, [sandbox]);
    await recovering(t.api, runId, "resume");

    const finish = marker("finish");
    const restored = path.join(tempDir("sandbox-2-"), "state.txt");
    const second = resume(runId, token, [{ out: "resumed" }, { waitFile: finish }], ["--checkpoint", restored]);
    await runnerEventCount(runId, 3);
    const run = await t.api.getRun(runId);
    expect(run).toMatchObject({ status: "running", generation: 2, pendingApprovals: [] });

    const decision = await t.api.request("POST", `/v1/runs/${runId}/approvals/ap-1`, { decision: "approve" });
    expect(decision).toMatchObject({ status: 409, body: { error: { code: "stale" } } });
    const replayed = await t.api.request("POST", `/v1/runs/${runId}/commands`, {
      commandId: "cancel-from-generation-1",
      type: "cancel",
      generation: 1,
    });
    expect(replayed).toMatchObject({ status: 409, body: { error: { code: "stale" } } });
    expect(replayed.body.error.message).toMatch(/current generation \(2\)/);
    expect(await t.api.getRun(runId)).toMatchObject({ status: "running", generation: 2 });

    touch(finish);
    expect(await second.waitExit()).toBe(0);
    const { events, runnerRows, control } = await transcript(t.api, runId);
    expect(runnerRows).toEqual([
      [1, 1, "agent.session"],
      [1, 2, "approval.requested"],
      [2, 1, "TEXT_MESSAGE_CHUNK"],
    ]);
    expect(control).toEqual([
      "run.created",
      "run.claimed",
      "run.stalled",
      "run.recovering",
      "run.generation.started",
      "approval.expired",
      "run.claimed",
      "run.finished",
    ]);
    expect(events.find((e) => e.type === "approval.expired")?.data).toEqual({
      requestId: "ap-1",
      reason: "generation_replaced",
    });
    expect((await t.api.getRun(runId)).status).toBe("succeeded");
  });
});

describe("a late bridge of the old generation", () => {
  it("is fenced when it comes back after the next generation started, and stores nothing", async () => {
    const sandbox = tempDir("sandbox-1-");
    const own = path.join(sandbox, "state.txt");
    const late = marker("late");
    const first = await start(
      [
        session("s-6"),
        { write: [own, "turn 1"] },
        line({ type: "RUN_FINISHED", threadId: "s-6", runId: "turn-1" }),
        { waitFile: late },
        { out: "printed while generation 2 runs" },
        { sleepForever: true },
      ],
      { extra: ["--checkpoint", own] },
    );
    const { runId, token } = first;
    await checkpointCovering(t.api, runId, 1, 2);
    first.bridge.child.kill("SIGSTOP"); // the sandbox is cut off, not gone
    try {
      await recovering(t.api, runId, "resume");
      const finish = marker("finish");
      const restored = path.join(tempDir("sandbox-2-"), "state.txt");
      const second = resume(runId, token, [{ out: "generation 2" }, { waitFile: finish }], ["--checkpoint", restored]);
      await runnerEventCount(runId, 3);

      touch(late);
      await waitFor("the old agent to print its late line", () =>
        fs.readFileSync(path.join(first.dir, "journal.ndjson"), "utf8").includes("generation 2 runs"),
      );
      first.bridge.child.kill("SIGCONT");
      expect(await first.bridge.waitExit()).toBe(2);
      expect(first.bridge.stderr()).toMatch(/fenced/);

      touch(finish);
      expect(await second.waitExit()).toBe(0);
    } finally {
      first.bridge.child.kill("SIGCONT");
    }
    const { runnerRows } = await transcript(t.api, runId);
    expect(runnerRows).toEqual([
      [1, 1, "agent.session"],
      [1, 2, "RUN_FINISHED"],
      [2, 1, "TEXT_MESSAGE_CHUNK"],
    ]);
    expect(await t.api.getRun(runId)).toMatchObject({ status: "succeeded", generation: 2 });
  });
});

describe("nobody recovers the run", () => {
  it("when recoverMs passes the run fails runner_lost", async () => {
    const started = marker("started");
    const { runId, dir, bridge } = await start([{ touch: started }, { sleepForever: true }], {
      timeouts: { ...TIMEOUTS, recoverMs: 3000 },
    });
    await waitFor("the agent to start", () => fs.existsSync(started));
    await t.api.waitForStatus(runId, "running");
    await wipeSandbox(bridge, dir);
    await recovering(t.api, runId, "restart");
    const failed = await t.api.waitForStatus(runId, "failed", 10_000);
    expect(failed.outcome?.error?.code).toBe("runner_lost");
    const { runnerRows, control } = await transcript(t.api, runId);
    expect(runnerRows).toEqual([]);
    expect(control).toEqual(["run.created", "run.claimed", "run.stalled", "run.recovering", "run.finished"]);
  });
});
