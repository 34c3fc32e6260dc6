/**
 * `npm run demo`: a run of the `demo` agent profile (agents.json: demo/agent.mjs) that a pool host
 * picks up, against the local server, or a server this script starts (and stops again when the
 * demo ends) if nothing answers. The embedded pool of `npm start` runs it; without one serving the
 * profile the demo starts a pool host of its own (a pool key minted for it, revoked at the end).
 * Prints the console link and the `agent-run watch` command, then waits for the run to end; the
 * agent stops to ask for approval, which an operator gives in the console or with `agent-run approve`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { launchPoolHost } from "../serve/dev-pool.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_URL, EXIT } from "../agent-run/src/args.ts";
import { ApiError, createClient } from "@agent-run/client";
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

const api = createClient({ url, key, attempts: 1 });
const say = (text: string) => process.stdout.write(`${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Server {
  started: boolean;
  stop(): Promise<void>;
}

/** Is anything answering? A verdict (401) counts as an answer; a refused connection does not. */
async function answering(): Promise<boolean> {
  try {
    await api.listRuns({ limit: 1 });
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status !== undefined) throw err;
    return false;
  }
}

async function ensureServer(): Promise<Server> {
  if (await answering()) return { started: false, stop: async () => {} };
  const target = new URL(url);
  if (!["localhost", "127.0.0.1"].includes(target.hostname)) {
    throw new ApiError("unreachable", `nothing answers on ${url}, and only a local server can be started here`);
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
      throw new ApiError("server_start", `wrangler dev did not answer on ${url}: ${output.slice(-1500)}`);
    }
    await sleep(250);
  }
  return { started: true, stop };
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Waits up to `ms` for `probe` to hold (it may not: the caller goes on either way). */
async function pollFor(ms: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe()) && Date.now() < deadline) await sleep(100);
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

interface Pool {
  started: boolean;
  /** Null while the pool runs (or when it is not the demo's own). */
  gone(): string | null;
  stop(): Promise<void>;
}

/** A connected pool host serving the demo profile, or one started for this demo. */
async function ensurePool(dir: string): Promise<Pool> {
  const { hosts } = await api.pools();
  if (hosts.some((h) => h.queue === "default" && h.profiles.includes("demo"))) {
    return { started: false, gone: () => null, stop: async () => {} };
  }
  const minted = await api.mintPoolKey({ label: "npm run demo" });
  const pool = launchPoolHost({ url, key: minted.key, slots: 1, dir, quiet: true });
  return {
    started: true,
    gone: () => (pool.exited() ? `the demo's pool host exited ${pool.child.exitCode ?? pool.child.signalCode}` : null),
    async stop() {
      await pool.stop();
      await api.revokePoolKey(minted.id).catch(() => {});
    },
  };
}

/** Prints each approval once as it is asked for; resolves with the run once it has ended. */
async function follow(runId: string, pool: Pool, command: (sub: string) => string): Promise<RunRecord> {
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
    const gone = pool.gone();
    if (gone) {
      // it may have exited because the run just ended: look once more before calling it early
      const last = await api.getRun(runId);
      if (exitForStatus(last.status) !== null) return last;
      throw new ApiError("pool_exit", `${gone} before the run ended`);
    }
    await sleep(POLL_MS);
  }
}

async function main(): Promise<number> {
  const server = await ensureServer();
  let pool: Pool | null = null;
  let runId: string | null = null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-run-demo-"));
  const shutdown = async () => {
    if (pool?.started && runId) {
      // After the run ends its bridge acknowledges, cleans up and exits by itself; then the pool stops.
      const id = runId;
      await pollFor(30_000, async () => (await api.getRun(id).catch(() => null))?.runner.connected === false);
    }
    await pool?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    await server.stop();
  };
  process.once("SIGINT", () => {
    say("\ninterrupted: cancelling the demo run");
    const cancel = runId ? api.cancel(runId, { reason: "demo interrupted" }) : null;
    void (cancel ?? Promise.resolve())
      .catch(() => {})
      .then(shutdown)
      .finally(() => process.exit(EXIT.interrupted));
  });
  try {
    pool = await ensurePool(dir);
    runId = `demo-${Date.now().toString(36)}`;
    await api.createRun({
      runId,
      agent: "demo",
      input: { prompt: "The payments tests fail; find out why and fix it." },
      metadata: { demo: true },
    });
    const viewer = await api.mintToken(runId, { role: "viewer", interact: true });
    const env = [
      process.env.AGENT_RUN_KEY ? "" : `AGENT_RUN_KEY=${key} `,
      // Set for the demo alone (`AGENT_RUN_URL=… npm run demo`), it is not in the next shell: say it.
      url === DEFAULT_URL ? "" : `AGENT_RUN_URL=${url} `,
    ].join("");
    const command = (sub: string) => `${env}npx agent-run ${sub}`;
    say(
      `\ndemo run ${runId} is running the demo agent on ${pool.started ? "a pool host started for the demo" : "the pool serving the demo profile"} (${server.started ? "a server started for the demo" : url})`,
    );
    say(`  console  ${consoleLink(url, runId, viewer.token)}`);
    say(`  watch    ${command(`watch ${runId}`)}`);
    const run = await follow(runId, pool, command);
    say(`\nrun ${runId} ${run.status}${run.outcome?.error ? `: ${run.outcome.error.message}` : ""}`);
    return exitForStatus(run.status) ?? EXIT.error;
  } finally {
    await shutdown();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const code = err instanceof ApiError ? err.code : "internal";
    process.stderr.write(`demo: ${code}: ${(err as Error).message}\n`);
    process.exit(EXIT.error);
  },
);
