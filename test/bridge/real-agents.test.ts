import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeArchive, encodeArchive } from "../../runner-bridge/src/checkpoint/archive.ts";
import { collectSession, sessionPlaces } from "../../runner-bridge/src/checkpoint/files.ts";
import { restoreSession } from "../../runner-bridge/src/checkpoint/restore.ts";
import { liveMembers } from "../../runner-bridge/src/proctree.ts";
import { readPid, runPaths } from "../../runner-bridge/src/rundir.ts";
import { CLAUDE_BIN, CODEX_BIN, requireRealAgents } from "../agents/paths.ts";
import { waitFor } from "../support/wait.ts";
import { agentHomeOf, resumeArgs, runArgs, tempDir } from "./harness/bridge.ts";
import { useEdge } from "./harness/context.ts";
import { wipeSandbox } from "./harness/sandbox.ts";
import { expectValidEvents, nativeOf } from "./unit/agui-support.ts";

// The real CLIs from npm (test/agents), offline and without credentials, through runner-bridge
// against a real `wrangler dev`. Each agent gets a fresh HOME, so its session files land there
// (the bridge's, or under --sandbox os the run's own beside its run directory: agentHomeOf).
requireRealAgents();
const t = useEdge();

/** A fresh home with a work directory in it (the agent's cwd). */
function sandbox(): { home: string; work: string } {
  const home = tempDir("real-agent-home-");
  const work = path.join(home, "work");
  fs.mkdirSync(work);
  return { home, work };
}

/**
 * Every live process on the machine whose environment has one of these HOMEs: the bridge, its
 * supervisor, the agent's tree (under --sandbox os the supervisor and the agent have the agent's).
 */
function processesWithHome(...homes: string[]): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = fs.readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      if (!homes.some((home) => environ.includes(`HOME=${home}`))) continue;
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim();
      found.push({ pid: Number(name), cmdline });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

type StoredEvent = Awaited<ReturnType<typeof t.api.runnerEvents>>[number];
const dataOf = (e: StoredEvent | undefined) => (e?.data ?? {}) as Record<string, unknown>;

describe("the real codex app-server (@openai/codex), offline", () => {
  it("a turn starts as valid AG-UI events, the thread is reported, and a cancel ends the run with no codex process left", async () => {
    const { home, work } = sandbox();
    const started = await t.startRun({
      agent: [CODEX_BIN, "app-server"],
      extra: ["--adapter", "codex", "--prompt", "say hi"],
      env: { HOME: home },
      cwd: work,
    });
    const { run, dir, bridge } = started;
    const agentHome = agentHomeOf(home, dir);
    // Without network codex retries its model connection: the turn has started and stays open.
    await waitFor(
      "codex to start the turn and report its first reconnect error",
      async () => {
        const events = await t.api.runnerEvents(run.id);
        return (
          events.some((e) => e.type === "RUN_STARTED") &&
          events.some((e) => (nativeOf(e) as { method?: string }).method === "error")
        );
      },
      60_000,
    );
    const events = await t.api.runnerEvents(run.id);
    expectValidEvents(events);
    expect(nativeOf(events[0] as StoredEvent)).toMatchObject({
      id: "rb-initialize",
      result: { userAgent: expect.any(String) },
    });
    const firstError = events.findIndex((e) => (nativeOf(e) as { method?: string }).method === "error");
    expect(
      events
        .slice(0, firstError)
        .filter((e) => e.type !== "RAW")
        .map((e) => e.type),
    ).toEqual([
      "agent.session", // the thread/start response
      "RUN_STARTED", // turn/started
      "TEXT_MESSAGE_CHUNK", // the prompt, as the turn's user message
    ]);
    const session = events.find((e) => e.type === "agent.session");
    const thread = dataOf(session).id as string;
    expect(dataOf(session)).toMatchObject({ provider: "codex", id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(dataOf(events.find((e) => e.type === "RUN_STARTED"))).toMatchObject({ threadId: thread });
    expect(dataOf(events.find((e) => e.type === "TEXT_MESSAGE_CHUNK"))).toMatchObject({
      role: "user",
      delta: "say hi",
    });
    expect(events.filter((e) => e.type === "RAW").every((e) => dataOf(e).source === "codex")).toBe(true);

    // The thread's rollout is where the session names it, under the agent's HOME.
    const rollout = (nativeOf(session as StoredEvent) as { result: { thread: { path: string } } }).result.thread.path;
    expect(rollout.startsWith(path.join(agentHome, ".codex", "sessions"))).toBe(true);
    expect(path.basename(rollout)).toMatch(new RegExp(`^rollout-.*-${thread}\\.jsonl$`));
    expect(fs.readFileSync(rollout, "utf8")).toContain(thread);

    // The real process tree: the native codex binary runs in the agent's process group (the npm
    // launcher execs it on Node 22, or spawns it as a child on older Node).
    const group = readPid(runPaths(dir).agentPid) as number;
    const exe = (pid: number) => fs.readlinkSync(`/proc/${pid}/exe`);
    expect(liveMembers(group).map(exe)).toContainEqual(expect.stringMatching(/codex-linux-[^/]+\/.*\/codex$/));
    expect(processesWithHome(home, agentHome).length).toBeGreaterThanOrEqual(3); // the bridge, its supervisor, codex

    await t.api.cancel(run.id);
    expect(await bridge.waitExit(60_000)).toBe(0);
    expect(await t.api.getRun(run.id)).toMatchObject({ status: "cancelled" });
    expect(liveMembers(group)).toEqual([]);
    expect(processesWithHome(home, agentHome)).toEqual([]);
    for (const d of [home, agentHome]) fs.rmSync(d, { recursive: true, force: true }); // kept for a look when the test fails
  });
});

describe("the real codex resumes its thread on a fresh sandbox", () => {
  it("from the restored rollout alone: thread/resume answers with the same thread in generation 2", async () => {
    const first = sandbox();
    const created = await t.api.createRun({ timeouts: { heartbeatMs: 2000, takeoverMs: 300, recoverMs: 120_000 } });
    const runId = created.run.id;
    const dir = t.runDir();
    const bridge = t.bridge(
      runArgs({
        edge: t.edge.url,
        runId,
        token: created.runnerToken,
        dir,
        extra: ["--adapter", "codex", "--prompt", "say hi", "--checkpoint-interval", "200"],
        agent: [CODEX_BIN, "app-server"],
      }),
      { env: { HOME: first.home }, cwd: first.work },
    );
    const stored = await waitFor(
      "a checkpoint of codex's rollout",
      async () => (await t.api.getRun(runId)).checkpoint,
      60_000,
    );
    expect(stored.generation).toBe(1);
    const thread = (await t.api.getRun(runId)).nativeSession?.id as string;
    await wipeSandbox(bridge, dir, [first.home, agentHomeOf(first.home, dir)]);
    const lost = await waitFor("the run to be recovering", async () => {
      const run = await t.api.getRun(runId);
      return run.status === "recovering" ? run : null;
    });
    // codex keeps printing reconnect errors after the turn starts, so events may follow the last
    // checkpoint: then an operator chooses to resume.
    if (lost.recovery?.mode === "ambiguous") {
      expect(
        (await t.api.request("POST", `/v1/runs/${runId}/recover`, { action: "resume", commandId: "op" })).status,
      ).toBe(201);
    } else {
      expect(lost.recovery?.mode).toBe("resume");
    }

    const second = sandbox();
    const dir2 = t.runDir();
    // The checkpoint is restored into the HOME the new agent has, not the bridge's (under --sandbox os).
    const secondHome = agentHomeOf(second.home, dir2);
    const resumed = t.bridge(
      resumeArgs({
        edge: t.edge.url,
        runId,
        token: created.runnerToken,
        dir: dir2,
        agent: [CODEX_BIN, "app-server"],
      }),
      { env: { HOME: second.home }, cwd: second.work },
    );
    const session = await waitFor(
      "generation 2 to report the resumed thread",
      async () => (await t.api.events(runId)).find((e) => e.generation === 2 && e.type === "agent.session"),
      60_000,
    );
    expect(session.data).toMatchObject({ provider: "codex", id: thread });
    expect(nativeOf(session as never)).toMatchObject({ id: "rb-thread-resume", result: { thread: { id: thread } } });
    expect(fs.readdirSync(path.join(secondHome, ".codex", "sessions"), { recursive: true }).map(String)).toContainEqual(
      expect.stringMatching(new RegExp(`rollout-.*-${thread}\\.jsonl$`)),
    );

    await t.api.cancel(runId);
    expect(await resumed.waitExit(60_000)).toBe(0);
    expect(await t.api.getRun(runId)).toMatchObject({ status: "cancelled", generation: 2 });
    expect(processesWithHome(second.home, secondHome)).toEqual([]);
    for (const d of [second.home, secondHome]) fs.rmSync(d, { recursive: true, force: true });
  });
});

describe("the real claude CLI (@anthropic-ai/claude-code), offline and not logged in", () => {
  it("the run fails with claude's not-logged-in message, the session is reported, and its transcript is on disk", async () => {
    const { home, work } = sandbox();
    const { run, bridge, dir } = await t.startRun({
      agent: [
        CLAUDE_BIN,
        ...["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
        ...["--permission-prompt-tool", "stdio"],
      ],
      extra: ["--adapter", "claude-code", "--prompt", "say hi"],
      env: { HOME: home },
      cwd: work,
    });
    expect(await bridge.waitExit(60_000)).toBe(0);

    const events = await t.api.runnerEvents(run.id);
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual([
      "RAW", // control_response to the bridge's initialize request
      "agent.session", // system/init
      "TEXT_MESSAGE_CHUNK", // the assistant's "Not logged in" message
      "RUN_ERROR", // result, is_error
    ]);
    const sessionId = dataOf(events[1]).id as string;
    expect(dataOf(events[1])).toMatchObject({ provider: "claude-code", id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(dataOf(events[2])).toMatchObject({ role: "assistant", delta: "Not logged in · Please run /login" });
    expect(dataOf(events[3])).toMatchObject({ message: "Not logged in · Please run /login", code: "claude_api_error" });
    expect(await t.api.getRun(run.id)).toMatchObject({
      status: "failed",
      outcome: { status: "failed", error: { code: "claude_api_error", message: "Not logged in · Please run /login" } },
    });

    // Where a later recovery finds the conversation: ~/.claude/projects/<cwd, dashed>/<session_id>.jsonl
    const agentHome = agentHomeOf(home, dir);
    const projects = path.join(agentHome, ".claude", "projects");
    const transcript = path.join(projects, work.replace(/[^a-zA-Z0-9]/g, "-"), `${sessionId}.jsonl`);
    const lines = fs
      .readFileSync(transcript, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.some((l) => l.type === "user" && l.message?.content === "say hi" && l.sessionId === sessionId)).toBe(
      true,
    );
    expect(processesWithHome(home, agentHome)).toEqual([]);
    for (const d of [home, agentHome]) fs.rmSync(d, { recursive: true, force: true }); // kept for a look when the test fails
  });
});

describe("the real claude resumes its session from a restored transcript", () => {
  /** One `claude -p` query in a sandbox; its stream-json messages. */
  function query(where: { home: string; work: string }, extra: string[]): Record<string, any>[] {
    const out = spawnSync(CLAUDE_BIN, ["-p", "--output-format", "stream-json", "--verbose", ...extra], {
      cwd: where.work,
      env: { PATH: process.env.PATH, HOME: where.home },
      encoding: "utf8",
      timeout: 60_000,
    });
    return out.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  }

  it("restored into the projects directory of another cwd, --resume finds it and keeps its id", () => {
    const first = sandbox();
    const session = query(first, ["say hi"]).find((m) => m.type === "system")?.session_id as string;
    const archive = collectSession(
      sessionPlaces("claude-code", { HOME: first.home }, first.work),
      "claude-code",
      session,
    );
    const bytes = encodeArchive(archive as NonNullable<typeof archive>);

    const second = sandbox();
    const moved = { home: second.home, work: path.join(second.home, "elsewhere") };
    fs.mkdirSync(moved.work);
    restoreSession(sessionPlaces("claude-code", { HOME: moved.home }, moved.work), decodeArchive(bytes));
    const resumed = query(moved, ["--resume", session, "again"]);
    expect(resumed.find((m) => m.type === "system")).toMatchObject({ session_id: session, cwd: moved.work });
    expect(JSON.stringify(resumed)).not.toContain("No conversation found");

    // Without the restore, the same command is refused.
    const bare = sandbox();
    const refused = query(bare, ["--resume", session, "again"]);
    expect(refused.at(-1)).toMatchObject({
      is_error: true,
      errors: [`No conversation found with session ID: ${session}`],
    });
    for (const dir of [first.home, second.home, bare.home]) fs.rmSync(dir, { recursive: true, force: true });
  });
});
