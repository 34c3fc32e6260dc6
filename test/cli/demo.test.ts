import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { waitFor } from "../support/wait.ts";
import { freePort, REPO } from "../support/wrangler-dev.ts";
import { cli, cliEnv, expectExit, ndjson, startCli } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";

const edge = useEdge();
const PACE_MS = "10";

interface Demo {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  waitExit(timeoutMs?: number): Promise<number | null>;
}

const demos: Demo[] = [];
afterEach(async () => {
  // A demo left running (a failed test) is interrupted, which cancels its run and stops what it started.
  for (const demo of demos.splice(0)) {
    if (demo.child.exitCode !== null || demo.child.signalCode !== null) continue;
    demo.child.kill("SIGINT");
    await demo.waitExit(30_000).catch(() => demo.child.kill("SIGKILL"));
  }
});

/** `npm run demo` (or `node demo/run.ts` when signals must reach it directly). */
function startDemo(url: string, options: { env?: Record<string, string>; direct?: boolean } = {}): Demo {
  const env = { ...cliEnv(url), AGENT_RUN_DEMO_PACE_MS: PACE_MS, ...options.env };
  const child = options.direct
    ? spawn(process.execPath, [path.join(REPO, "demo/run.ts")], { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] })
    : spawn("npm", ["run", "demo"], { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (err += d));
  const demo: Demo = {
    child,
    stdout: () => out,
    stderr: () => err,
    async waitExit(timeoutMs = 90_000) {
      await waitFor(
        `the demo to exit; stdout: ${out.slice(-1000)} stderr: ${err.slice(-1000)}`,
        () => child.exitCode !== null || child.signalCode !== null,
        timeoutMs,
      );
      return child.exitCode;
    },
  };
  demos.push(demo);
  return demo;
}

/** What the demo prints once the run is going: its id, console link and watch command. */
async function started(demo: Demo): Promise<{ runId: string; link: string; watch: string }> {
  await waitFor(
    `the demo to print its watch command; stderr: ${demo.stderr()}`,
    () => /^ {2}watch /m.test(demo.stdout()),
    90_000,
  );
  const runId = /^demo run (demo-[a-z0-9]+) /m.exec(demo.stdout())?.[1] as string;
  const link = /^ {2}console {2}(\S+)$/m.exec(demo.stdout())?.[1] as string;
  const watch = /^ {2}watch {4}(.+)$/m.exec(demo.stdout())?.[1] as string;
  return { runId, link, watch };
}

/** The approve command the demo prints once the agent asks. */
async function approvalCommand(demo: Demo): Promise<string> {
  await waitFor(`the demo to print the approve command; stdout: ${demo.stdout()}`, () =>
    /^ {2}.*npx agent-run approve .+$/m.test(demo.stdout()),
  );
  return /^ {2}(.*npx agent-run approve .+)$/m.exec(demo.stdout())?.[1] as string;
}

/** The demo agent's own output for this decision, read straight from its stdout: the events it must produce. */
function agentEvents(runId: string, decision: "approve" | "deny"): { type: string; data: unknown }[] {
  const answer = JSON.stringify({ type: "approval.resolved", requestId: "write-round-fix", decision });
  const out = spawnSync(process.execPath, [path.join(REPO, "demo/agent.mjs"), "--run", runId, "--pace", "0"], {
    input: `${answer}\n`,
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(out.status).toBe(0);
  return out.stdout
    .trim()
    .split("\n")
    .map((line) => {
      const { type, ...data } = JSON.parse(line) as { type: string };
      return { type, data };
    });
}

/** Live processes whose command line mentions the text (zombies, already dead, excluded). */
function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmdline.includes(text) && !/^State:\s+Z/m.test(status)) found.push(`${pid} ${cmdline}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function claims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString("utf8"));
}

/** The log of a demo run: the agent's own events, element for element, and the control events around them. */
function checkLog(events: RunEvent[], runId: string, decision: "approve" | "deny"): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const runner = events.filter((e) => e.source === "runner").map((e) => ({ type: e.type, data: e.data }));
  expect(runner).toEqual(agentEvents(runId, decision));
  expect(events.filter((e) => e.source === "control").map((e) => e.type)).toEqual([
    "run.created",
    "run.claimed",
    "approval.resolved",
    "command.queued",
    "command.acked",
    "run.finished",
  ]);
  expect(events.at(-1)?.data).toEqual({ outcome: { status: "succeeded", exitCode: 0 } });
}

describe("npm run demo", () => {
  test("against a running server: the agent waits for the approval given with agent-run approve, then succeeds", async () => {
    const demo = startDemo(edge.url);
    const { runId, link, watch } = await started(demo);
    expect(link).toMatch(new RegExp(`^${edge.url}/runs/${runId}#token=rt1\\.`));
    expect(claims(link.split("#token=")[1] as string)).toMatchObject({ runId, role: "viewer", interact: true });
    // AGENT_RUN_URL was set for the demo alone: the commands it prints carry it to the next shell.
    expect(watch).toBe(`AGENT_RUN_URL=${edge.url} npx agent-run watch ${runId}`);
    const watcher = startCli(edge.url, ["watch", runId, "--json"]);

    const approve = await approvalCommand(demo);
    expect(approve).toBe(`AGENT_RUN_URL=${edge.url} npx agent-run approve ${runId} write-round-fix`);
    const approved = await cli(edge.url, approve.split(" ").slice(3));
    expect(approved).toEqual({
      code: 0,
      stdout: `write-round-fix on ${runId}: approved; the agent gets the decision\n`,
      stderr: "",
    });

    await expectExit(demo, 0);
    expect(demo.stdout().trim().split("\n").at(-1)).toBe(`run ${runId} succeeded`);
    expect(demo.stderr()).toBe("");
    const stored = await edge.api.events(runId);
    checkLog(stored, runId, "approve");
    await expectExit(watcher, 0);
    expect(ndjson<RunEvent>(watcher.stdout())).toEqual(stored);
  });

  test("with nothing listening it starts a local server, and stops it when the demo ends", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const state = fs.mkdtempSync(path.join(os.tmpdir(), "demo-state-"));
    try {
      const demo = startDemo(url, { env: { AGENT_RUN_DEMO_STATE: state } });
      const { runId } = await started(demo);
      expect(demo.stdout()).toContain(
        `nothing answers on ${url}; starting a local server for this demo (it stops when the demo ends)`,
      );
      const watcher = startCli(url, ["watch", runId, "--json"]);
      const approve = await approvalCommand(demo);
      expect(approve.startsWith(`AGENT_RUN_URL=${url} npx agent-run approve `)).toBe(true);
      const denied = await cli(url, ["deny", ...approve.split(" ").slice(4), "--reason", "not today"]);
      expect(denied.code).toBe(0);
      await expectExit(watcher, 0);
      checkLog(ndjson<RunEvent>(watcher.stdout()), runId, "deny");
      await expectExit(demo, 0);
      expect(demo.stdout().trim().split("\n").at(-1)).toBe(`run ${runId} succeeded`);
      const after = await cli(url, ["list"]);
      expect(after.stderr).toMatch(/^agent-run: unreachable: /);
    } finally {
      fs.rmSync(state, { recursive: true, force: true });
    }
  });

  test("Ctrl-C cancels the demo run and leaves nothing running", async () => {
    const demo = startDemo(edge.url, { direct: true });
    const { runId } = await started(demo);
    await approvalCommand(demo);
    demo.child.kill("SIGINT");
    await expectExit(demo, 130);
    const run = await edge.api.getRun(runId);
    expect(run.status).toBe("cancelled");
    expect(run.runner.connected).toBe(false);
    expect(processesMentioning(runId)).toEqual([]); // neither the bridge nor the agent outlived the demo
  });
});
