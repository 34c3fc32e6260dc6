/**
 * Dispatch through a pool: N runs created at once on one queue served by 4 pool hosts × 8 slots
 * (`runner-bridge pool`, real processes, an agent that prints one line and exits), against the
 * peer it replaces: the client starting one `runner-bridge run` per created run itself, at most 32
 * at a time. Measured: runs claimed per second over the batch, and create → first claim per run
 * (p50/p99), both from the edge's own event times. Counts bounded, waits bounded; nothing asserted.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO } from "../test/support/wrangler-dev.ts";
import { BENCH_API_KEY, call, JSON_TYPE } from "./client.ts";
import { sleep } from "./sleep.ts";
import { percentile } from "./stats.ts";
import type { Target } from "./targets.ts";

export const POOL_HOSTS = 4;
export const POOL_SLOTS = 8;
export const POOL_RUNS = 64;
const BRIDGE = path.join(REPO, "runner-bridge/bin/runner-bridge.mjs");
const AGENT = [process.execPath, "-e", "console.log('done')"];
const DONE_MS = 300_000;

export interface DispatchRow {
  label: string;
  runs: number;
  perSecond: number;
  p50: number;
  p99: number;
}

const headers = { authorization: `Bearer ${BENCH_API_KEY}`, "content-type": JSON_TYPE };
async function api<T>(target: Target, method: string, route: string, body?: unknown, expect = [200, 201]): Promise<T> {
  const res = await call(method, target.url + route, {
    headers,
    expect,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await res.json()) as T;
}

/** Creates `count` runs, 8 requests in flight at a time; calls `created` with each answer. */
async function createRuns(target: Target, count: number, body: object, created?: (answer: Created) => void) {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        next++;
        const answer = await api<Created>(target, "POST", "/v1/runs", body, [201]);
        ids.push(answer.run.id);
        created?.(answer);
      }
    }),
  );
  return ids;
}
interface Created {
  run: { id: string };
  runnerToken: string;
}

/** create → first claim per run and the batch's claims per second, from the stored event times. */
async function summarize(target: Target, label: string, ids: string[]): Promise<DispatchRow> {
  const deadline = Date.now() + DONE_MS;
  const spans: { created: number; claimed: number }[] = [];
  for (const id of ids) {
    for (;;) {
      const page = await api<{ events: { type: string; time: string }[] }>(
        target,
        "GET",
        `/v1/runs/${id}/events?after=0&limit=50`,
      );
      const at = (type: string) => page.events.find((e) => e.type === type)?.time;
      const created = at("run.created");
      const claimed = at("run.claimed");
      if (created && claimed && at("run.finished")) {
        spans.push({ created: Date.parse(created), claimed: Date.parse(claimed) });
        break;
      }
      if (Date.now() > deadline) throw new Error(`${label}: run ${id} did not finish within ${DONE_MS / 1000} s`);
      await sleep(200);
    }
  }
  const latencies = spans.map((s) => s.claimed - s.created);
  const seconds = (Math.max(...spans.map((s) => s.claimed)) - Math.min(...spans.map((s) => s.created))) / 1000;
  return {
    label,
    runs: ids.length,
    perSecond: ids.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

function stopAll(children: ChildProcess[]): Promise<unknown> {
  return Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve(null);
          child.once("exit", resolve);
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
        }),
    ),
  );
}

async function poolRow(target: Target, dir: string): Promise<DispatchRow> {
  const agents = path.join(dir, "agents.json");
  fs.writeFileSync(agents, JSON.stringify({ bench: { adapter: "ndjson", command: AGENT } }));
  const { key } = await api<{ key: string }>(target, "POST", "/v1/pool-keys", { label: "bench" }, [201]);
  const hosts = Array.from({ length: POOL_HOSTS }, (_, i) =>
    spawn(
      process.execPath,
      [
        BRIDGE,
        "pool",
        "--edge",
        target.url,
        "--slots",
        String(POOL_SLOTS),
        "--agents",
        agents,
        "--dir",
        path.join(dir, `host-${i}`),
        "--quiet",
      ],
      { env: { ...process.env, RUNNER_POOL_KEY: key }, stdio: "ignore" },
    ),
  );
  try {
    const connected = Date.now() + 60_000;
    while ((await api<{ hosts: unknown[] }>(target, "GET", "/v1/pools")).hosts.length < POOL_HOSTS) {
      if (Date.now() > connected) throw new Error(`${POOL_HOSTS} pool hosts did not connect within 60 s`);
      await sleep(200);
    }
    const ids = await createRuns(target, POOL_RUNS, { agent: "bench", queue: "default" });
    return await summarize(target, `pool: ${POOL_HOSTS} hosts × ${POOL_SLOTS} slots`, ids);
  } finally {
    await stopAll(hosts);
  }
}

/** The peer: each run gets its own `runner-bridge run`, started by the client, at most 32 at once. */
async function handStartedRow(target: Target, dir: string): Promise<DispatchRow> {
  const running = new Set<ChildProcess>();
  const waiting: Created[] = [];
  const start = (answer: Created) => {
    const child = spawn(
      process.execPath,
      [
        BRIDGE,
        "run",
        "--edge",
        target.url,
        "--run",
        answer.run.id,
        "--dir",
        path.join(dir, answer.run.id),
        "--quiet",
        "--",
        ...AGENT,
      ],
      { env: { ...process.env, RUNNER_BRIDGE_TOKEN: answer.runnerToken }, stdio: "ignore" },
    );
    running.add(child);
    child.once("exit", () => {
      running.delete(child);
      const queued = waiting.shift();
      if (queued) start(queued);
    });
  };
  const ids = await createRuns(target, POOL_RUNS, {}, (answer) => {
    if (running.size < POOL_HOSTS * POOL_SLOTS) start(answer);
    else waiting.push(answer);
  });
  try {
    return await summarize(target, `peer: one hand-started bridge per run (≤ ${POOL_HOSTS * POOL_SLOTS} at once)`, ids);
  } finally {
    await stopAll([...running]);
  }
}

export async function measurePools(target: Target): Promise<DispatchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-pools-"));
  try {
    const peer = await handStartedRow(target, dir);
    const pool = await poolRow(target, dir);
    return [pool, peer];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function printPools(rows: DispatchRow[]): void {
  console.log(`\nruns dispatched through one queue (${POOL_RUNS} runs created at once; npm run serve)\n`);
  console.log("| dispatch | runs | claimed per s | create → claimed p50 ms | p99 ms |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const r of rows) {
    console.log(`| ${r.label} | ${r.runs} | ${r.perSecond.toFixed(1)} | ${Math.round(r.p50)} | ${Math.round(r.p99)} |`);
  }
  const [pool, peer] = rows;
  if (pool && peer)
    console.log(
      `\npool / peer: ${(pool.perSecond / peer.perSecond).toFixed(2)}× the claims per second, ${(pool.p50 / peer.p50).toFixed(2)}× the p50`,
    );
}
