import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ndjsonAdapter } from "../../runner-bridge/src/adapters/ndjson.ts";
import { CommandFile, type Envelope } from "../../runner-bridge/src/command-file.ts";
import { startAgent } from "../../runner-bridge/src/launch.ts";
import { groupAlive, terminateGroup } from "../../runner-bridge/src/proctree.ts";
import { type RunSpec, readPid, runPaths } from "../../runner-bridge/src/rundir.ts";
import { alive, FIXTURES, NODE, tempDir } from "./harness/bridge.ts";
import { waitFor } from "../support/wait.ts";

/** Starts the scripted agent under a real supervisor; `inbox` is written before it starts. */
async function launch(steps: unknown[], inbox: Envelope[] = []) {
  const dir = tempDir("supervised-");
  const script = path.join(dir, "..", `${path.basename(dir)}-script.json`);
  fs.writeFileSync(script, JSON.stringify(steps));
  const paths = runPaths(dir);
  const spec: RunSpec = {
    version: 1,
    runId: "unit",
    adapter: "ndjson",
    command: NODE,
    args: [path.join(FIXTURES, "scripted-agent.mjs"), script],
    cwd: dir,
    envNames: [],
    nonce: `nonce-${Date.now()}`,
    createdAt: new Date().toISOString(),
  };
  if (inbox.length) await new CommandFile(paths.inbox).appendOnce(inbox);
  const supervisorPid = await startAgent(paths, spec, ndjsonAdapter(), { PATH: process.env.PATH ?? "" });
  const journal = () => fs.readFileSync(paths.journal, "utf8");
  return { dir, paths, spec, supervisorPid, journal };
}

describe("the supervisor", () => {
  it("journals the agent's stdout, terminates a torn last line and appends the exit sentinel", async () => {
    const run = await launch([
      { out: "a" },
      { out: '{"type":"t","n":1}' },
      { stderr: "oops" },
      { outRaw: "torn" },
      { exit: 7 },
    ]);
    const text = await waitFor("the exit sentinel in the journal", () => {
      const t = run.journal();
      return t.includes("__runnerBridgeExit") ? t : null;
    });
    expect(text).toBe(
      `a\n{"type":"t","n":1}\ntorn\n{"__runnerBridgeExit":{"nonce":"${run.spec.nonce}","code":7,"signal":null}}\n`,
    );
    expect(fs.readFileSync(run.paths.stderr, "utf8")).toBe("oops\n");
    await waitFor("the supervisor to exit after writing the sentinel", () => !alive(run.supervisorPid));
  });

  it("feeds each inbox envelope to the agent's stdin exactly once, in order", async () => {
    const run = await launch([{ readLines: 2 }, { exit: 0 }]);
    const inbox = new CommandFile(run.paths.inbox);
    await inbox.appendOnce([{ commandId: "c1", line: '{"type":"input","text":"one"}' }]);
    await inbox.appendOnce([{ commandId: "c1", line: '{"type":"input","text":"one"}' }]);
    await inbox.appendOnce([{ commandId: "c2", line: "two" }]);
    await waitFor("the agent to exit after reading two lines", () => run.journal().includes("__runnerBridgeExit"));
    const lines = run.journal().trim().split("\n").slice(0, -1);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { type: "agent.received", line: { type: "input", text: "one" } },
      { type: "agent.received", line: "two" },
    ]);
  });

  it("hands the agent a multi-byte character that straddles a 64 KiB read of the inbox intact", async () => {
    // The whole inbox is in place before the supervisor starts, so its first read ends at byte
    // 65536 exactly; the envelope is laid out so that byte falls inside a three-byte "€".
    const prefix = '{"commandId":"c1","line":"';
    const filler = "x".repeat(65536 - Buffer.byteLength(prefix) - 1);
    const text = `${filler}${"€".repeat(1000)}`;
    const run = await launch([{ readLines: 1 }, { exit: 0 }], [{ commandId: "c1", line: text }]);
    const head = fs.readFileSync(run.paths.inbox).subarray(65535, 65538);
    expect(head.toString("utf8")).toBe("€"); // the character's bytes sit on both sides of the boundary
    await waitFor("the agent to exit after reading the line", () => run.journal().includes("__runnerBridgeExit"));
    const [received] = run.journal().trim().split("\n");
    const { line } = JSON.parse(received as string) as { line: string };
    expect(line.indexOf("\uFFFD"), "position of a replacement character").toBe(-1);
    expect(line === text, "the agent read exactly the envelope's line").toBe(true);
  });

  it("runs the agent in its own process group, which a SIGTERM-then-SIGKILL empties entirely", async () => {
    const pidFile = path.join(tempDir("tree-"), "pids");
    const run = await launch([{ spawnTree: pidFile }, { out: "ready" }, { sleepForever: true }]);
    const [agentPid, grandchildPid] = (
      await waitFor(
        "the agent to record its grandchild",
        // Both pids, whole: the agent's writeFileSync truncates before it writes.
        () =>
          fs.existsSync(pidFile) &&
          /^\d+ \d+$/.test(fs.readFileSync(pidFile, "utf8")) &&
          fs.readFileSync(pidFile, "utf8"),
      )
    )
      .split(" ")
      .map(Number) as [number, number];
    expect(readPid(run.paths.agentPid)).toBe(agentPid);
    expect(alive(grandchildPid)).toBe(true);
    await terminateGroup(agentPid, 500);
    expect(groupAlive(agentPid)).toBe(false);
    expect(alive(grandchildPid)).toBe(false);
    const sentinel = await waitFor("the sentinel after the kill", () =>
      run
        .journal()
        .split("\n")
        .find((l) => l.includes("__runnerBridgeExit")),
    );
    expect(JSON.parse(sentinel).__runnerBridgeExit.signal).toBe("SIGTERM");
  });

  it("records each journal line's time in journal.times, the torn last line's too", async () => {
    const before = Date.now();
    const run = await launch([{ out: "one" }, { sleepMs: 200 }, { out: "two" }, { outRaw: "torn" }, { exit: 0 }]);
    await waitFor("the exit sentinel in the journal", () => run.journal().includes("__runnerBridgeExit"));
    const times = fs
      .readFileSync(run.paths.times, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => line.split(" ").map(Number) as [number, number]);
    expect(times.map(([line]) => line)).toEqual([1, 2, 3]);
    const [one, two, torn] = times.map(([, ms]) => ms) as [number, number, number];
    expect(one).toBeGreaterThanOrEqual(before);
    expect(two - one).toBeGreaterThanOrEqual(195);
    expect(torn).toBeGreaterThanOrEqual(two);
    expect(torn).toBeLessThanOrEqual(Date.now());
    expect(run.journal().split("\n").slice(0, 3)).toEqual(["one", "two", "torn"]);
  });
});
