/**
 * `npm run demo`: a run of the demo agent (demo/agent.mjs) under runner-bridge, against the local
 * server, or a server this script starts (and stops again when the demo ends) if nothing answers.
 * Prints the console link and the `agent-run watch` command, then waits for the run to end; the
 * agent stops to ask for approval, which an operator gives in the console or with `agent-run approve`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_URL, EXIT } from "../agent-run/src/args.ts";
import { Api, CliError, runPath } from "../agent-run/src/client.ts";
import { consoleLink } from "../agent-run/src/format.ts";
import { exitForStatus } from "../agent-run/src/watch.ts";
import type { RunRecord } from "../src/protocol/index.ts";

const REPO = path.resolve(import.meta.dirname, "..");
const url = (process.env.AGENT_RUN_URL || DEFAULT_URL).replace(/\/+$/, "");
const key = process.env.AGENT_RUN_KEY || "dev-key-alpha";
/** Where a server started by the demo keeps its state: `.data`, as `npm start` does. */
const state = process.env.AGENT_RUN_DEMO_STATE || path.join(REPO, ".data");
const SERVER_READY_MS = 90_000;
const POLL_MS = 500;

const api = new Api(url, key);
const say = (text: string) => process.stdout.write(`${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Server {
  started: boolean;
  stop(): Promise<void>;
}

/** Is anything answering? A verdict (401) counts as an answer; a refused connection does not. */
async function answering(): Promise<boolean> {
  try {
    await api.call("GET", "/v1/runs?limit=1");
    return true;
  } catch (err) {
    if (err instanceof CliError && err.status !== undefined) throw err;
    return false;
  }
}

async function ensureServer(): Promise<Server> {
  if (await answering()) return { started: false, stop: async () => {} };
  const target = new URL(url);
  if (!["localhost", "127.0.0.1"].includes(target.hostname)) {
    throw new CliError("unreachable", `nothing answers on ${url}, and only a local server can be started here`);
  }
  say(`nothing answers on ${url}; starting a local server for this demo (it stops when the demo ends)`);
  const child = spawn(
    process.execPath,
    [
      path.join(REPO, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      ...["--port", target.port || "80", "--ip", target.hostname, "--persist-to", state],
      ...["--log-level", "warn", "--show-interactive-dev-session=false"],
    ],
    {
      cwd: REPO,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    },
  );
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const stop = () => stopGroup(child, 10_000);
  const deadline = Date.now() + SERVER_READY_MS;
  while (!(await answering())) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new CliError("server_start", `wrangler dev did not answer on ${url}: ${output.slice(-1500)}`);
    }
    await sleep(250);
  }
  return { started: true, stop };
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Waits up to `ms` for the process to exit on its own. */
async function exitWithin(child: ChildProcess, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!hasExited(child) && Date.now() < deadline) await sleep(50);
}

/** SIGTERM to the process group, SIGKILL after `graceMs`; resolves once the leader has exited. */
async function stopGroup(child: ChildProcess, graceMs: number): Promise<void> {
  if (hasExited(child) || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // gone already
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

function startBridge(runId: string, runnerToken: string, dir: string): ChildProcess {
  const bridge = spawn(
    process.execPath,
    [
      path.join(REPO, "runner-bridge/bin/runner-bridge.mjs"),
      ...["run", "--edge", url, "--run", runId, "--dir", dir, "--quiet", "--"],
      ...[process.execPath, path.join(REPO, "demo/agent.mjs"), "--run", runId],
      ...(process.env.AGENT_RUN_DEMO_PACE_MS ? ["--pace", process.env.AGENT_RUN_DEMO_PACE_MS] : []),
    ],
    // The token in the environment, never in argv, where the process list would show it.
    {
      cwd: REPO,
      detached: true,
      stdio: ["ignore", "inherit", "pipe"],
      env: { ...process.env, RUNNER_BRIDGE_TOKEN: runnerToken },
    },
  );
  bridge.stderr?.on("data", (d: Buffer) => {
    for (const line of d.toString().split("\n")) if (line.trim()) process.stderr.write(`runner-bridge: ${line}\n`);
  });
  return bridge;
}

/** Prints each approval once as it is asked for; resolves with the run once it has ended. */
async function follow(runId: string, bridge: ChildProcess, command: (sub: string) => string): Promise<RunRecord> {
  const announced = new Set<string>();
  for (;;) {
    const run = await api.getRun(runId);
    for (const approval of run.pendingApprovals) {
      if (announced.has(approval.requestId)) continue;
      announced.add(approval.requestId);
      say(`\nthe agent is waiting for approval of ${approval.requestId}; approve it in the console, or run:`);
      say(`  ${command(`approve ${runId} ${approval.requestId}`)}`);
    }
    if (exitForStatus(run.status) !== null) return run;
    if (hasExited(bridge)) {
      // it may have exited because the run just ended: look once more before calling it early
      const last = await api.getRun(runId);
      if (exitForStatus(last.status) !== null) return last;
      throw new CliError(
        "bridge_exit",
        `runner-bridge exited ${bridge.exitCode ?? bridge.signalCode} before the run ended`,
      );
    }
    await sleep(POLL_MS);
  }
}

async function main(): Promise<number> {
  const server = await ensureServer();
  let bridge: ChildProcess | null = null;
  let runId: string | null = null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-run-demo-"));
  const shutdown = async () => {
    if (bridge) {
      // After the run ends the bridge acknowledges, cleans up and exits by itself.
      await exitWithin(bridge, 30_000);
      await stopGroup(bridge, 10_000);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    await server.stop();
  };
  process.once("SIGINT", () => {
    say("\ninterrupted: cancelling the demo run");
    const cancel = runId ? api.call("POST", runPath(runId, "/cancel"), { reason: "demo interrupted" }) : null;
    void (cancel ?? Promise.resolve())
      .catch(() => {})
      .then(shutdown)
      .finally(() => process.exit(EXIT.interrupted));
  });
  try {
    runId = `demo-${Date.now().toString(36)}`;
    const created = (
      await api.call<{ run: RunRecord; runnerToken: string }>("POST", "/v1/runs", {
        runId,
        agent: { name: "demo-agent" },
        input: { prompt: "The payments tests fail; find out why and fix it." },
        metadata: { demo: true },
      })
    ).body;
    const viewer = (
      await api.call<{ token: string }>("POST", runPath(runId, "/tokens"), { role: "viewer", interact: true })
    ).body;
    bridge = startBridge(runId, created.runnerToken, dir);
    const env = [
      process.env.AGENT_RUN_KEY ? "" : `AGENT_RUN_KEY=${key} `,
      // Set for the demo alone (`AGENT_RUN_URL=… npm run demo`), it is not in the next shell: say it.
      url === DEFAULT_URL ? "" : `AGENT_RUN_URL=${url} `,
    ].join("");
    const command = (sub: string) => `${env}npx agent-run ${sub}`;
    say(
      `\ndemo run ${runId} is running the demo agent under runner-bridge (${server.started ? "a server started for the demo" : url})`,
    );
    say(`  console  ${consoleLink(url, runId, viewer.token)}`);
    say(`  watch    ${command(`watch ${runId}`)}`);
    const run = await follow(runId, bridge, command);
    say(`\nrun ${runId} ${run.status}${run.outcome?.error ? `: ${run.outcome.error.message}` : ""}`);
    return exitForStatus(run.status) ?? EXIT.error;
  } finally {
    await shutdown();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const code = err instanceof CliError ? err.code : "internal";
    process.stderr.write(`demo: ${code}: ${(err as Error).message}\n`);
    process.exit(EXIT.error);
  },
);
