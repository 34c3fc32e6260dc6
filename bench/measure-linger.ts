/**
 * The bridge's linger (`runner-bridge --linger-ms`, docs/BENCHMARKS.md "Bridge linger") seen from
 * a viewer: the real `runner-bridge run` process against `npm run serve`, its agent a small script
 * writing AG-UI lines in bursts (a line about every millisecond), each line carrying its own write
 * time, and one viewer socket on the run. Per `--linger-ms`: agent write → viewer receive p50/p99,
 * and how many `events` frames the edge stored for the lines. The viewer rows
 * (measure-viewers.ts) drive the runner socket directly and cannot see the bridge's pump or
 * linger; this row goes through both. The viewer must get every event once and in order, and the
 * stored log must be what it got (checked, not timed). Every wait is bounded; nothing is asserted
 * about time.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { REPO } from "../test/support/wrangler-dev.ts";
import { BENCH_API_KEY, call } from "./client.ts";
import { count } from "./measurement.ts";
import { fmt } from "./report.ts";
import { type BenchRun, createRun } from "./runner-socket.ts";
import { median, percentile } from "./stats.ts";
import type { Target } from "./targets.ts";
import { within } from "./viewer-socket.ts";

export const LINGERS_MS = [0, 10, 25] as const;
/** Lines the agent writes per pass (after its ready line). */
export const LINES = 300;
/** A burst: this many lines about 1 ms apart, then a pause, as a model streams tokens in chunks. */
export const BURST = 10;
export const PAUSE_MS = 20;
/** After the last line, longer than any linger plus a pump tick: the last frame goes by the linger, not by the exit. */
const TAIL_MS = 300;
const BRIDGE = path.join(REPO, "runner-bridge/bin/runner-bridge.mjs");
const DELTA = "The quick brown fox jumps over the lazy dog; streaming tokens to a viewer. ";

/**
 * The agent: a ready line, then (once the bench has seen it arrive, so the bridge is connected
 * and claimed and start-up is not counted) `lines` TEXT_MESSAGE_CONTENT lines, each with `i` and
 * `writtenAt` (ms since the epoch, sub-millisecond: the same clock the viewer reads).
 */
const AGENT_SOURCE = `import fs from "node:fs";
const [goFile, lines, burst, pauseMs, tailMs] = [process.argv[2], ...process.argv.slice(3).map(Number)];
const out = (event) => fs.writeSync(1, JSON.stringify(event) + "\\n");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
out({ type: "bench.ready" });
const deadline = Date.now() + 60000;
while (!fs.existsSync(goFile)) {
  if (Date.now() > deadline) {
    fs.writeSync(2, "no go file within 60 s\\n");
    process.exit(1);
  }
  await sleep(2);
}
for (let i = 1; i <= lines; i++) {
  const writtenAt = performance.timeOrigin + performance.now();
  out({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: ${JSON.stringify(DELTA)}, i, writtenAt });
  await sleep(i % burst === 0 ? pauseMs : 1);
}
await sleep(tailMs);
`;

interface WatchEvent {
  seq: number;
  source: string;
  sourceSeq?: number;
  type: string;
  data?: { i?: number; writtenAt?: number };
}

/** One viewer of the run that, unlike viewer-socket.ts's, reads each event's data and counts frames. */
function openLingerViewer(target: Target, run: BenchRun) {
  const url = `${target.url.replace(/^http/, "ws")}/v1/runs/${run.runId}/watch?after=0&token=${encodeURIComponent(run.viewerToken)}`;
  const ws = new WebSocket(url);
  const seen = {
    seqs: [] as number[],
    sourceSeqs: [] as number[],
    /** The measured lines' `i`, in the order received, and each one's write → receive ms. */
    lines: [] as number[],
    latencies: [] as number[],
    /** Live `events` frames holding at least one measured line: one per frame the edge stored. */
    frames: 0,
  };
  let onAttached: () => void = () => undefined;
  let onReady: () => void = () => undefined;
  let onEnded: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const failure = new Promise<never>((_, reject) => (fail = reject));
  failure.catch(() => undefined); // surfaced through the promises below
  const attached = Promise.race([new Promise<void>((resolve) => (onAttached = resolve)), failure]);
  const ready = Promise.race([new Promise<void>((resolve) => (onReady = resolve)), failure]);
  const ended = Promise.race([new Promise<void>((resolve) => (onEnded = resolve)), failure]);
  for (const p of [attached, ready, ended]) p.catch(() => undefined);
  let done = false;
  ws.addEventListener("message", (message) => {
    const at = performance.timeOrigin + performance.now();
    const frame = JSON.parse(String(message.data)) as { type: string; events?: WatchEvent[] };
    if (frame.type === "events") {
      let measured = false;
      for (const e of frame.events ?? []) {
        seen.seqs.push(e.seq);
        if (e.source !== "runner" || e.sourceSeq === undefined) continue;
        seen.sourceSeqs.push(e.sourceSeq);
        if (e.type === "CUSTOM") onReady();
        else if (typeof e.data?.i === "number" && typeof e.data.writtenAt === "number") {
          measured = true;
          seen.lines.push(e.data.i);
          seen.latencies.push(at - e.data.writtenAt);
        }
      }
      if (measured) seen.frames++;
    } else if (frame.type === "status") onAttached();
    else if (frame.type === "end") {
      done = true;
      onEnded();
    } else if (frame.type === "error") fail(new Error(`viewer of ${run.runId}: ${String(message.data)}`));
  });
  ws.addEventListener("close", (event) => {
    if (!done) fail(new Error(`viewer of ${run.runId} closed ${event.code} ${event.reason} before end`));
  });
  ws.addEventListener("error", () => fail(new Error(`viewer socket ${url} failed`)));
  const close = () => {
    done = true;
    ws.close();
  };
  return { seen, attached, ready, ended, close };
}

/** `runner-bridge run` on `run`, its output kept for the error message; `exited` resolves with the code. */
function startBridge(target: Target, run: BenchRun, dir: string, lingerMs: number, agent: string[]) {
  const args = ["run", "--edge", target.url, "--run", run.runId, "--dir", path.join(dir, "run")];
  args.push("--linger-ms", String(lingerMs), "--quiet", "--", ...agent);
  // The token through the environment, as a deployment passes it (not in the process list).
  const child: ChildProcess = spawn(process.execPath, [BRIDGE, ...args], {
    cwd: dir,
    env: { ...process.env, RUNNER_BRIDGE_TOKEN: run.runnerToken },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(killer);
  };
  return { exited, output: () => output.slice(-2000), stop };
}

/** The run's stored log, every page (the events endpoint). */
async function storedSeqs(target: Target, runId: string): Promise<{ seqs: number[]; runner: number }> {
  const seqs: number[] = [];
  let runner = 0;
  for (let after = 0, pages = 0; pages < 100; pages++) {
    const res = await call("GET", `${target.url}/v1/runs/${runId}/events?after=${after}&limit=500`, {
      headers: { authorization: `Bearer ${BENCH_API_KEY}` },
      expect: [200],
    });
    const page = (await res.json()) as { events: WatchEvent[]; hasMore: boolean; nextAfter: number };
    for (const e of page.events) {
      seqs.push(e.seq);
      if (e.source === "runner") runner++;
    }
    if (!page.hasMore) return { seqs, runner };
    after = page.nextAfter;
  }
  throw new Error(`events of ${runId}: more than 100 pages`);
}

const inOrder = (values: number[], first: number, length: number) =>
  values.length === length && values.every((v, i) => v === first + i);

export interface LingerPass {
  lingerMs: number;
  lines: number;
  p50: number;
  p99: number;
  frames: number;
}

/** One run through the bridge with `--linger-ms lingerMs`, `lines` measured lines. */
async function pass(target: Target, lingerMs: number, lines: number, agentFile: string): Promise<LingerPass> {
  const run = await createRun(target);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-linger-run-"));
  const goFile = path.join(dir, "go");
  const viewer = openLingerViewer(target, run);
  let bridge: ReturnType<typeof startBridge> | null = null;
  try {
    await within(viewer.attached, 10_000, `the viewer of ${run.runId} attaching`);
    const agent = [
      process.execPath,
      agentFile,
      goFile,
      String(lines),
      String(BURST),
      String(PAUSE_MS),
      String(TAIL_MS),
    ];
    const started = startBridge(target, run, dir, lingerMs, agent);
    bridge = started;
    const exitedEarly = started.exited.then((code) => {
      throw new Error(
        `runner-bridge exited ${code} before its agent's first line reached the viewer:\n${started.output()}`,
      );
    });
    exitedEarly.catch(() => undefined);
    await within(
      Promise.race([viewer.ready, exitedEarly]),
      30_000,
      `the agent's ready line of ${run.runId} reaching the viewer`,
    );
    fs.writeFileSync(goFile, "");
    await within(viewer.ended, 60_000, `the viewer of ${run.runId} receiving the run's end`);
    const code = await within(started.exited, 30_000, `runner-bridge of ${run.runId} exiting after the run ended`);
    if (code !== 0) throw new Error(`runner-bridge of ${run.runId} exited ${code}:\n${started.output()}`);

    const { seen } = viewer;
    if (!inOrder(seen.seqs, 1, seen.seqs.length))
      throw new Error(`viewer of ${run.runId} saw seqs ${seen.seqs.join(",")}`);
    if (!inOrder(seen.sourceSeqs, 1, lines + 1))
      throw new Error(
        `viewer of ${run.runId} saw runner sourceSeqs ${seen.sourceSeqs.join(",")} (expected 1–${lines + 1})`,
      );
    if (!inOrder(seen.lines, 1, lines))
      throw new Error(`viewer of ${run.runId} saw lines ${seen.lines.join(",")} (expected 1–${lines})`);
    const stored = await storedSeqs(target, run.runId);
    if (stored.runner !== lines + 1 || stored.seqs.join(",") !== seen.seqs.join(","))
      throw new Error(
        `stored log of ${run.runId} (seqs ${stored.seqs.join(",")}, ${stored.runner} runner events) is not what the viewer saw (${seen.seqs.join(",")})`,
      );
    return {
      lingerMs,
      lines,
      p50: percentile(seen.latencies, 50),
      p99: percentile(seen.latencies, 99),
      frames: seen.frames,
    };
  } finally {
    viewer.close();
    if (!fs.existsSync(goFile)) fs.writeFileSync(goFile, ""); // a waiting agent finishes by itself
    await bridge?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A warm-up pass (discarded), then `rounds` rounds of every linger, the order rotating per round. */
export async function measureLinger(target: Target, rounds: number): Promise<LingerPass[][]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-linger-"));
  const agentFile = path.join(dir, "agent.mjs");
  fs.writeFileSync(agentFile, AGENT_SOURCE);
  try {
    console.log("\nbridge linger: runner-bridge run → npm run serve → one viewer");
    await pass(target, 10, count(LINES, 0.1), agentFile);
    const byLinger: LingerPass[][] = LINGERS_MS.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < LINGERS_MS.length; k++) {
        const index = (k + round) % LINGERS_MS.length;
        const result = await pass(target, LINGERS_MS[index] as number, LINES, agentFile);
        byLinger[index]?.push(result);
        console.log(
          `  round ${round + 1} --linger-ms ${String(result.lingerMs).padEnd(2)}  p50 ${fmt(result.p50)} ms, p99 ${fmt(result.p99)} ms, ${result.frames} frames`,
        );
      }
    }
    return byLinger;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function printLinger(byLinger: LingerPass[][]): void {
  const rounds = byLinger[0]?.length ?? 0;
  console.log(
    `\nbridge linger (${LINES} lines in bursts of ${BURST} about 1 ms apart, ${PAUSE_MS} ms between bursts; one viewer; median of ${rounds} rounds)\n`,
  );
  console.log(
    "| `--linger-ms` | agent write → viewer receive p50 ms | p99 ms | `events` frames stored | events per frame |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: |");
  for (const passes of byLinger) {
    const first = passes[0];
    if (!first) continue;
    const frames = median(passes.map((p) => p.frames));
    console.log(
      `| ${first.lingerMs} | ${fmt(median(passes.map((p) => p.p50)))} | ${fmt(median(passes.map((p) => p.p99)))} | ${frames} | ${fmt(first.lines / frames)} |`,
    );
  }
}
