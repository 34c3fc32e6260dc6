import path from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { attachArgs, FIXTURES, NODE, resumeArgs, runArgs, tempDir } from "./harness/bridge.ts";
import { useEdge } from "./harness/context.ts";
import { checkpointCovering, recovering, transcript, wipeSandbox } from "./harness/sandbox.ts";
import { nativeOf } from "./unit/agui-support.ts";

// Issue 10, tests 1 and 2: the sandbox is wiped mid-run (bridge, supervisor and agent killed -9,
// the run directory and the agent's session files deleted) after a checkpoint; a fresh sandbox
// resumes the provider's own session with `runner-bridge resume`, and the transcript goes on in
// generation 2 with no duplicate and no gap.

const t = useEdge();
const CODEX = [NODE, path.join(FIXTURES, "fake-codex-app-server.mjs")];
const CLAUDE = [NODE, path.join(FIXTURES, "fake-claude-code.mjs")];
/** Quick loss detection: the lease lapses after 2 s (heartbeats every 0.67 s), the takeover window 0.3 s later. */
const TIMEOUTS = { heartbeatMs: 2000, takeoverMs: 300, recoverMs: 60_000 };
const CHECKPOINT_EVERY = ["--checkpoint-interval", "150"];

/** The edge's own events around a wiped sandbox resumed by a second bridge, one input sent to it. */
const RECOVERED_CONTROL = [
  "run.created",
  "run.claimed",
  "run.stalled",
  "run.recovering",
  "run.generation.started",
  "run.claimed",
  "command.queued",
  "command.acked",
  "run.finished",
];

/**
 * Generation 1's checkpoints (one `run.checkpoint` per new digest; the same files covering more
 * events only raise the stored sourceSeq) went up in order and never past its `covered` events;
 * any later one is generation 2's.
 */
function expectCheckpointsBeforeLoss(
  events: Stored[],
  checkpoints: { digest: string; generation: number; sourceSeq: number; bytes: number }[],
  covered: number,
) {
  const stalledAt = events.find((e) => e.type === "run.stalled")?.seq ?? 0;
  const before = events.filter((e) => e.type === "run.checkpoint" && e.seq < stalledAt).map((e) => e.data);
  expect(before.length).toBeGreaterThan(0);
  const seqs = before.map((c) => (c as { generation: number; sourceSeq: number }).sourceSeq);
  expect(before.every((c) => (c as { generation: number }).generation === 1)).toBe(true);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  expect(Math.max(...seqs)).toBeLessThanOrEqual(covered);
  expect(checkpoints.slice(before.length).every((c) => c.generation === 2)).toBe(true);
}

type Stored = Awaited<ReturnType<typeof t.api.events>>[number];
const data = (e: Stored | undefined) => (e?.data ?? {}) as Record<string, any>;

describe("a run outlives its sandbox", () => {
  it("codex: the new sandbox resumes the thread with thread/resume, and the transcript goes on", async () => {
    const created = await t.api.createRun({ timeouts: TIMEOUTS });
    const runId = created.run.id;
    const home1 = tempDir("codex-home-");
    const dir1 = t.runDir();
    const first = t.bridge(
      runArgs({
        edge: t.edge.url,
        runId,
        token: created.runnerToken,
        dir: dir1,
        extra: ["--adapter", "codex", "--prompt", "wait for interrupt", "--env", "CODEX_HOME", ...CHECKPOINT_EVERY],
        agent: CODEX,
      }),
      { env: { CODEX_HOME: home1 } },
    );
    // initialize, thread/start (+ thread/started), turn/start, turn/started and the prompt's item:
    // the turn stays open, so only the timer checkpoints it.
    await checkpointCovering(t.api, runId, 1, 7);
    await wipeSandbox(first, dir1, [home1]);
    await recovering(t.api, runId, "resume");

    const home2 = tempDir("codex-home-");
    const second = t.bridge(
      resumeArgs({
        edge: t.edge.url,
        runId,
        token: created.runnerToken,
        dir: t.runDir(),
        extra: ["--env", "CODEX_HOME"],
        agent: CODEX,
      }),
      { env: { CODEX_HOME: home2 } },
    );
    await waitFor("generation 2 to report its session", async () =>
      (await t.api.events(runId)).some((e) => e.generation === 2 && e.type === "agent.session"),
    );
    await t.api.command(runId, { commandId: "go-on", type: "input", text: "now finish" });
    expect(await second.waitExit()).toBe(0);

    const { events, runnerRows, control, checkpoints } = await transcript(t.api, runId);
    expectCheckpointsBeforeLoss(events, checkpoints, 7);
    expect(runnerRows).toEqual([
      [1, 1, "RAW"], // initialize
      [1, 2, "agent.session"], // thread/start
      [1, 3, "RAW"], // thread/started
      [1, 4, "RAW"], // turn/start
      [1, 5, "RUN_STARTED"],
      [1, 6, "TEXT_MESSAGE_CHUNK"], // the prompt
      [1, 7, "RAW"],
      [2, 1, "RAW"], // initialize
      [2, 2, "agent.session"], // thread/resume
      [2, 3, "RAW"], // turn/start
      [2, 4, "RUN_STARTED"],
      [2, 5, "TEXT_MESSAGE_CHUNK"], // the input
      [2, 6, "RAW"],
      [2, 7, "TEXT_MESSAGE_START"],
      [2, 8, "TEXT_MESSAGE_CONTENT"],
      [2, 9, "TEXT_MESSAGE_END"],
      [2, 10, "RUN_FINISHED"],
    ]);
    expect(control).toEqual(RECOVERED_CONTROL);
    const byType = (generation: number, type: string) =>
      events.filter((e) => e.generation === generation && e.type === type);
    // The agent got thread/resume for the same thread (the response answers its id) and kept
    // counting turns from the restored rollout: the next turn is turn_2.
    expect(nativeOf(byType(2, "agent.session")[0] as never)).toMatchObject({
      id: "rb-thread-resume",
      result: { thread: { id: "thr_1" } },
    });
    expect(data(byType(2, "agent.session")[0])).toMatchObject({ provider: "codex", id: "thr_1" });
    expect(data(byType(2, "RUN_STARTED")[0])).toMatchObject({ threadId: "thr_1", runId: "turn_2" });
    expect(data(byType(2, "TEXT_MESSAGE_CONTENT")[0])).toMatchObject({ delta: "You said: now finish" });
    expect(data(events.find((e) => e.type === "run.generation.started"))).toMatchObject({
      generation: 2,
      previous: 1,
      mode: "resume",
      nativeSession: { provider: "codex", id: "thr_1" },
    });
    expect(await t.api.getRun(runId)).toMatchObject({ status: "succeeded", generation: 2 });
  });

  it("claude-code: the new sandbox, in another cwd, resumes the session with --resume; a successor takes it over", async () => {
    // A takeover window long enough for a successor bridge to start and claim.
    const created = await t.api.createRun({ timeouts: { ...TIMEOUTS, takeoverMs: 3000 } });
    const runId = created.run.id;
    const config1 = tempDir("claude-config-");
    const cwd1 = tempDir("sandbox-1-");
    const dir1 = t.runDir();
    const first = t.bridge(
      runArgs({
        edge: t.edge.url,
        runId,
        token: created.runnerToken,
        dir: dir1,
        extra: [
          ["--adapter", "claude-code", "--prompt", "wait for interrupt"],
          ["--env", "CLAUDE_CONFIG_DIR", ...CHECKPOINT_EVERY],
        ].flat(),
        agent: CLAUDE,
      }),
      { env: { CLAUDE_CONFIG_DIR: config1 }, cwd: cwd1 },
    );
    await checkpointCovering(t.api, runId, 1, 3); // initialize's answer, system/init, the first words
    await wipeSandbox(first, dir1, [config1, cwd1]);
    await recovering(t.api, runId, "resume");

    const dir2 = t.runDir();
    const sandbox2 = { env: { CLAUDE_CONFIG_DIR: tempDir("claude-config-") }, cwd: tempDir("sandbox-2-") };
    const second = t.bridge(
      resumeArgs({
        edge: t.edge.url,
        runId,
        token: created.runnerToken,
        dir: dir2,
        extra: ["--env", "CLAUDE_CONFIG_DIR"],
        agent: CLAUDE,
      }),
      sandbox2,
    );
    await waitFor("generation 2 to answer initialize", async () =>
      (await t.api.events(runId)).some((e) => e.generation === 2 && e.type === "RAW"),
    );
    // The resumed generation's bridge dies too: once its lease lapses, a successor on its
    // directory takes generation 2 over within the takeover window.
    await second.kill9();
    await t.api.waitForStatus(runId, "stalled");
    const successor = t.bridge(
      attachArgs({ edge: t.edge.url, runId, token: created.runnerToken, dir: dir2 }),
      sandbox2,
    );
    await waitFor("the successor to claim generation 2", async () => {
      const run = await t.api.getRun(runId);
      return run.epoch === 3 && run.generation === 2 && run.status === "running";
    });
    await t.api.command(runId, { commandId: "go-on", type: "input", text: "now finish" });
    expect(await successor.waitExit()).toBe(0);

    const { events, runnerRows, control, checkpoints } = await transcript(t.api, runId);
    expectCheckpointsBeforeLoss(events, checkpoints, 3);
    expect(runnerRows).toEqual([
      [1, 1, "RAW"], // initialize
      [1, 2, "agent.session"], // system/init
      [1, 3, "TEXT_MESSAGE_CHUNK"],
      [2, 1, "RAW"], // initialize
      [2, 2, "agent.session"], // system/init of the resumed session
      [2, 3, "TEXT_MESSAGE_CHUNK"],
      [2, 4, "RUN_FINISHED"],
    ]);
    expect(control).toEqual([
      ...RECOVERED_CONTROL.slice(0, 6),
      "run.stalled",
      "run.claimed",
      ...RECOVERED_CONTROL.slice(6),
    ]);
    const gen2 = events.filter((e) => e.generation === 2);
    expect(data(gen2[1])).toMatchObject({ provider: "claude-code", id: "sess-fixture" });
    // Message numbering goes on from the restored transcript: it was restored for the new cwd.
    expect(nativeOf(gen2[2] as never)).toMatchObject({ message: { id: "msg_fixture_2" } });
    expect(data(gen2[2])).toMatchObject({ delta: "You said: now finish" });
    expect(await t.api.getRun(runId)).toMatchObject({ status: "succeeded", generation: 2 });
  });
});
