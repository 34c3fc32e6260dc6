import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { groupAlive, processAlive, signalGroup } from "../../runner-bridge/src/proctree.ts";
import { ALPHA, Api } from "../support/api.ts";
import { waitFor } from "../support/wait.ts";
import { type DevServer, REPO, startWranglerDev } from "../support/wrangler-dev.ts";

export const BRIDGE_BIN = path.join(REPO, "runner-bridge/bin/runner-bridge.mjs");
export const POOL_AGENT = path.join(REPO, "test/pools/fixtures/pool-agent.mjs");

/**
 * The profile every test host serves: the pool tests' scripted agent, its state file as
 * checkpoint, without the OS sandbox (its markers live in the host's /tmp, and killSandbox needs
 * the host's /proc); `sandboxed` below is the pools' default.
 */
export const SCRIPTED = {
  adapter: "ndjson",
  command: [process.execPath, POOL_AGENT],
  checkpoint: "state.json",
  sandbox: "none",
};

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function writeAgents(profiles: Record<string, unknown>): string {
  const file = path.join(tempDir("pool-agents-"), "agents.json");
  fs.writeFileSync(file, JSON.stringify(profiles));
  return file;
}

export interface PoolHostProcess {
  child: ChildProcess;
  dir: string;
  output(): string;
  /** The hostId it announced (its first "connected … as" line). */
  hostId(): Promise<string>;
  /** Run ids it accepted, in order (from its log). */
  accepted(): string[];
  /** The whole sandbox host lost: kill -9 of its process group, its supervisors and agents, then its directories deleted. */
  destroy(): Promise<void>;
  stop(): Promise<void>;
  exited(): boolean;
}

export interface StartHostOptions {
  key: string;
  slots?: number;
  agents?: string;
  edge?: string;
  queue?: string;
  labels?: string[];
  env?: Record<string, string>;
}

/** `runner-bridge pool` as a real process in its own process group, with a fresh directory. */
export function startPoolHost(edgeUrl: string, o: StartHostOptions): PoolHostProcess {
  const dir = tempDir("pool-host-");
  const args = [
    ...[BRIDGE_BIN, "pool", "--edge", o.edge ?? edgeUrl, "--dir", dir],
    ...["--slots", String(o.slots ?? 2), "--agents", o.agents ?? writeAgents({ scripted: SCRIPTED })],
    ...["--reconnect-min-ms", "50", "--reconnect-max-ms", "500"],
    ...(o.queue ? ["--queue", o.queue] : []),
    ...(o.labels ? ["--labels", o.labels.join(",")] : []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    detached: true, // its own process group: the pool and its bridges, as one host
    env: { ...process.env, RUNNER_POOL_KEY: o.key, ...o.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  let gone = false;
  child.on("exit", () => (gone = true));
  const pgid = child.pid as number;
  const host: PoolHostProcess = {
    child,
    dir,
    output: () => out,
    exited: () => gone,
    hostId: () =>
      waitFor(
        `pool host ${pgid} to connect; its output: ${out.slice(-2000)}`,
        () => / as (\S+) \(\d+ slots\)/.exec(out)?.[1],
        60_000,
      ),
    accepted: () => [...out.matchAll(/accepted \S+: \w+ run (\S+) generation/g)].map((m) => m[1] as string),
    async destroy() {
      const pids = pidFiles(dir);
      signalGroup(pgid, "SIGKILL");
      for (const { supervisor, agent } of pids) {
        if (supervisor !== null && processAlive(supervisor)) process.kill(supervisor, "SIGKILL");
        if (agent !== null) signalGroup(agent, "SIGKILL");
      }
      await waitFor(
        `pool host ${pgid}, its supervisors and agents to die of SIGKILL`,
        () =>
          !groupAlive(pgid) &&
          pids.every(
            (p) => (p.supervisor === null || !processAlive(p.supervisor)) && (p.agent === null || !groupAlive(p.agent)),
          ),
        10_000,
      );
      fs.rmSync(dir, { recursive: true, force: true });
    },
    async stop() {
      if (gone) return;
      child.kill("SIGTERM");
      await waitFor(`pool host ${pgid} to stop after SIGTERM`, () => gone, 20_000).catch(() => host.destroy());
    },
  };
  return host;
}

/** Every bridge run directory's supervisor and agent pids under a pool host's directory. */
function pidFiles(root: string): { supervisor: number | null; agent: number | null }[] {
  const found: { supervisor: number | null; agent: number | null }[] = [];
  const read = (file: string) => {
    try {
      const pid = Number(fs.readFileSync(file, "utf8").trim());
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    } catch {
      return null;
    }
  };
  for (const run of fs.existsSync(root) ? fs.readdirSync(root) : []) {
    for (const assignment of fs.readdirSync(path.join(root, run))) {
      const dir = path.join(root, run, assignment, "run");
      found.push({ supervisor: read(path.join(dir, "supervisor.pid")), agent: read(path.join(dir, "agent.pid")) });
    }
  }
  return found;
}

export interface PoolContext {
  edge: DevServer;
  api: Api;
  /** A pool key minted for the tenant of `apiKey` (alpha by default). */
  poolKey(apiKey?: string): Promise<{ id: string; key: string }>;
  /** Starts a pool host that is destroyed after the test if it still runs. */
  host(o: StartHostOptions & { edge?: string }): PoolHostProcess;
  /** Creates a pool run of the scripted profile whose prompt is these steps. */
  createRun(steps: unknown[], body?: Record<string, unknown>, apiKey?: string): Promise<string>;
}

/** One real `wrangler dev` for the file, hosts cleaned up after each test. */
export function usePools(vars: Record<string, string> = {}): PoolContext {
  const hosts: PoolHostProcess[] = [];
  const ctx = {
    async poolKey(apiKey = ALPHA) {
      const res = await ctx.api.request("POST", "/v1/pool-keys", { label: "test" }, apiKey);
      if (res.status !== 201) throw new Error(`POST /v1/pool-keys answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body as { id: string; key: string };
    },
    host(o: StartHostOptions) {
      const host = startPoolHost(ctx.edge.url, o);
      hosts.push(host);
      return host;
    },
    async createRun(steps: unknown[], body: Record<string, unknown> = {}, apiKey = ALPHA) {
      const res = await ctx.api.request(
        "POST",
        "/v1/runs",
        { agent: "scripted", input: { prompt: JSON.stringify(steps) }, ...body },
        apiKey,
      );
      if (res.status !== 201) throw new Error(`POST /v1/runs answered ${res.status}: ${JSON.stringify(res.body)}`);
      return (res.body as { run: { id: string } }).run.id;
    },
  } as PoolContext;
  beforeAll(async () => {
    ctx.edge = await startWranglerDev(vars);
    ctx.api = new Api(() => ctx.edge.url);
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) if (!host.exited()) await host.destroy();
  });
  afterAll(async () => {
    await ctx.edge?.stop();
  });
  return ctx;
}

/** The stored log split as the bridge suites compare it: runner rows and the edge's own events, in log order. */
export async function transcript(api: Api, runId: string) {
  const events = await api.events(runId);
  const seqs = events.map((e) => e.seq);
  if (seqs.some((seq, i) => seq !== i + 1)) throw new Error(`seq is not gapless from 1: ${seqs.join(",")}`);
  const runner = events.filter((e) => e.source === "runner");
  return {
    events,
    runnerRows: runner.map((e) => [e.generation ?? null, e.sourceSeq ?? null, e.type]),
    texts: runner.map((e) => (e.data as { delta?: string }).delta ?? null).filter((d) => d !== null),
    control: events.filter((e) => e.source !== "runner" && e.type !== "run.checkpoint").map((e) => e.type),
  };
}

export function marker(name: string): string {
  return path.join(tempDir("pool-marker-"), name);
}

export function touch(file: string): void {
  fs.writeFileSync(file, "go");
}
