/**
 * Side-by-side benchmark: this worker (a real `wrangler dev`, local workerd + SQLite Durable
 * Objects) against the reference Durable Streams server (`@durable-streams/server`, Node), with
 * one client and the same code for every target.
 *
 *   npm run bench                         (from the repo root)
 *   BENCH_ROUNDS=9 npm run bench          more rounds (default 5)
 *
 * Targets: `ours`; `ref-file` — the reference with its file-backed store (segment files with an
 * fdatasync per append, LMDB metadata: durable, like SQLite); `ref-mem` — the reference's
 * in-memory store (not durable; an upper bound). Every measurement runs a warm-up pass on each
 * target, then `BENCH_ROUNDS` rounds; within a round the targets take turns, and the order
 * rotates from round to round so machine noise lands on all of them. Rows report the median
 * over rounds. Every loop is bounded by a count and a time limit, everything is on loopback,
 * and everything started here is stopped before exit.
 *
 * This is a benchmark, not a test: it asserts nothing about timing. It does fail loudly (with
 * the exact request and response) if a server answers with an unexpected status.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { freePort, REPO, startWranglerDev } from "../test/support/wrangler-dev.ts";

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5) || 5);
const OVERALL_LIMIT_MS = 25 * 60_000;
const API_KEY = "dev-key-alpha";
/** The same for every target: no compression, so both sides send the same bytes. */
const COMMON_HEADERS = { "accept-encoding": "identity" };
const JSON_TYPE = "application/json";

// ---------------------------------------------------------------------------------------------
// Targets

interface Target {
  name: string;
  label: string;
  url: string;
  /** Runner WebSocket ingest is only possible on ours. */
  hasRunnerSocket: boolean;
  /** The server's own log, shown when something goes wrong. */
  output(): string;
  stop(): Promise<void>;
}

async function startOurs(): Promise<Target> {
  const dev = await startWranglerDev({ ALLOW_ANONYMOUS_STREAMS: "true" });
  return {
    name: "ours",
    label: "ours (wrangler dev)",
    url: dev.url,
    hasRunnerSocket: true,
    output: () => dev.output(),
    stop: () => dev.stop(),
  };
}

/**
 * `bench/floor-worker.ts` (a one-line 404 worker) under its own `wrangler dev`, outside the repo's
 * config: the local platform's per-request floor. Only the baseline measurement uses it.
 */
async function startFloorWorker(): Promise<{ url: string; output(): string; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-floor-"));
  // Its own config, so wrangler does not pick up the repo's wrangler.toml (Durable Objects, vars).
  const config = path.join(dir, "wrangler.json");
  const main = path.join(REPO, "bench/floor-worker.ts");
  fs.writeFileSync(config, JSON.stringify({ name: "bench-floor", main, compatibility_date: "2026-11-01" }));
  const args = [
    path.join(REPO, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
    ...["--config", config],
    ...["--port", String(port), "--ip", "127.0.0.1", "--persist-to", path.join(dir, "state")],
    ...["--log-level", "warn", "--show-interactive-dev-session=false"],
  ];
  const child = spawn(process.execPath, args, {
    cwd: dir,
    detached: true, // its own process group, so stop() takes workerd down with it
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
  });
  let output = "";
  let exited = false;
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  child.on("exit", () => (exited = true));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // already gone
    }
  };
  const stop = async () => {
    if (!exited) {
      signal("SIGTERM");
      const deadline = Date.now() + 10_000;
      while (!exited && Date.now() < deadline) await sleep(50);
      if (!exited) signal("SIGKILL");
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited || /\[ERROR\]/.test(output)) break;
    try {
      const res = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 404) return { url, output: () => output, stop };
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) break;
    await sleep(250);
  }
  await stop();
  throw new Error(`floor worker's wrangler dev did not answer on ${url}:\n${output.slice(-3000)}`);
}

async function startReference(mode: "file" | "memory"): Promise<Target> {
  const dataDir = mode === "file" ? fs.mkdtempSync(path.join(os.tmpdir(), "ds-ref-bench-")) : null;
  const args = [path.join(REPO, "bench/reference-server.ts"), ...(dataDir ? [dataDir] : [])];
  const child: ChildProcess = spawn(process.execPath, args, { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  let exited = false;
  child.on("exit", () => (exited = true));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`reference server (${mode}) not ready in 20 s: ${output}`)), 20_000);
    child.stdout?.on("data", (chunk) => {
      output += chunk;
      const match = /READY (\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`reference server (${mode}) exited with ${code}: ${output}`));
    });
  });
  const stop = async () => {
    if (!exited) {
      child.kill("SIGTERM");
      const deadline = Date.now() + 8_000;
      while (!exited && Date.now() < deadline) await sleep(50);
      if (!exited) child.kill("SIGKILL");
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    name: mode === "file" ? "ref-file" : "ref-mem",
    label: mode === "file" ? "reference, file store" : "reference, memory store",
    url,
    hasRunnerSocket: false,
    output: () => output,
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers: anything unexpected stops the run with the exact request and response.

class UnexpectedResponse extends Error {}

async function call(
  method: string,
  url: string,
  options: { body?: string; headers?: Record<string, string>; expect: number[]; signal?: AbortSignal },
): Promise<Response> {
  const headers = { ...COMMON_HEADERS, ...options.headers };
  const res = await fetch(url, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
    signal: options.signal ?? AbortSignal.timeout(30_000),
  });
  if (!options.expect.includes(res.status)) {
    const text = await res.text().catch((err: Error) => `<body unreadable: ${err.message}>`);
    const body = options.body === undefined ? "" : `\n  body (${options.body.length} chars): ${options.body.slice(0, 400)}`;
    throw new UnexpectedResponse(
      `unexpected response\n  request: ${method} ${url}\n  headers: ${JSON.stringify(headers)}${body}\n` +
        `  response: ${res.status} ${res.statusText}\n  headers: ${JSON.stringify(Object.fromEntries(res.headers))}\n` +
        `  body: ${text.slice(0, 2000)}`,
    );
  }
  return res;
}

let streamCounter = 0;
function streamUrl(target: Target, kind: string): string {
  streamCounter += 1;
  return `${target.url}/v1/stream/bench/${kind}/${process.pid}-${streamCounter}`;
}

/** Creates an empty JSON-mode stream and returns its tail offset. */
async function createJsonStream(url: string): Promise<string> {
  const res = await call("PUT", url, { headers: { "content-type": JSON_TYPE }, expect: [201] });
  await res.arrayBuffer();
  return res.headers.get("stream-next-offset") ?? "-1";
}

async function appendJson(url: string, body: string): Promise<void> {
  const res = await call("POST", url, { body, headers: { "content-type": JSON_TYPE }, expect: [200, 204] });
  await res.arrayBuffer();
}

// ---------------------------------------------------------------------------------------------
// Payloads: AG-UI-shaped events of ~120 bytes, the size of a streamed text delta.

const DELTA = "The quick brown fox jumps over the lazy dog; streaming tokens to a viewer. ";
function agentEvent(i: number) {
  return { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m1", delta: DELTA, i } };
}
function runnerEvent(sourceSeq: number) {
  const e = agentEvent(sourceSeq);
  return { sourceSeq, type: e.type, data: e.data };
}

// ---------------------------------------------------------------------------------------------
// Measurements

interface Row {
  key: string;
  label: string;
  unit: string;
  higherIsBetter: boolean;
}

interface Measurement {
  title: string;
  rows: Row[];
  /** A whole pass on one target; `scale` < 1 for the warm-up. Returns a value per row key. */
  run(target: Target, scale: number): Promise<Record<string, number>>;
}

function count(n: number, scale: number): number {
  return Math.max(1, Math.round(n * scale));
}

/**
 * Not one of the asked-for comparisons: bare request round trips, to read the others against.
 * GET, not HEAD: under `wrangler dev` every HEAD response carries `connection: close`, so a HEAD
 * loop would time TCP connects too.
 */
const roundTrip: Measurement = {
  title: "baseline: request round trips",
  rows: [
    {
      key: "floor",
      label: "baseline: GET → 404 from a one-line worker (`bench/floor-worker.ts`) under its own `wrangler dev`, i.e. the local platform's floor (ours column); the reference's 404 (reference columns)",
      unit: "ops/s",
      higherIsBetter: true,
    },
    { key: "rt404", label: "baseline: sequential GET of an unknown path (404; ours: the worker's router only, no Durable Object)", unit: "ops/s", higherIsBetter: true },
    { key: "rtEmpty", label: "baseline: sequential catch-up GET of an empty stream (no storage write)", unit: "ops/s", higherIsBetter: true },
  ],
  async run(target, scale) {
    const url = streamUrl(target, "empty");
    await createJsonStream(url);
    const loop = async (requestUrl: string, expect: number) => {
      const n = count(300, scale);
      const limitMs = 8_000;
      const start = performance.now();
      let done = 0;
      while (done < n && performance.now() - start < limitMs) {
        const res = await call("GET", requestUrl, { expect: [expect] });
        await res.arrayBuffer();
        done += 1;
      }
      return done / ((performance.now() - start) / 1000);
    };
    const rt404 = await loop(`${target.url}/no-such-route-${process.pid}`, 404);
    const rtEmpty = await loop(`${url}?offset=-1`, 200);
    const floor = target.name === "ours" && floorWorker ? await loop(`${floorWorker.url}/x`, 404) : rt404;
    return { floor, rt404, rtEmpty };
  },
};

const sequentialSingle: Measurement = {
  title: "sequential single appends",
  rows: [{ key: "single", label: "sequential single appends (1 JSON message per POST)", unit: "ops/s", higherIsBetter: true }],
  async run(target, scale) {
    const url = streamUrl(target, "single");
    await createJsonStream(url);
    const n = count(400, scale);
    const limitMs = 10_000;
    const start = performance.now();
    let done = 0;
    while (done < n && performance.now() - start < limitMs) {
      await appendJson(url, JSON.stringify(agentEvent(done)));
      done += 1;
    }
    return { single: done / ((performance.now() - start) / 1000) };
  },
};

const batched: Measurement = {
  title: "100-event batched appends",
  rows: [{ key: "batched", label: "100-event batched appends (JSON array POST)", unit: "events/s", higherIsBetter: true }],
  async run(target, scale) {
    const url = streamUrl(target, "batched");
    await createJsonStream(url);
    const batches = count(60, scale);
    const limitMs = 15_000;
    const start = performance.now();
    let events = 0;
    for (let b = 0; b < batches && performance.now() - start < limitMs; b++) {
      const batch = Array.from({ length: 100 }, (_, k) => agentEvent(b * 100 + k));
      await appendJson(url, JSON.stringify(batch));
      events += 100;
    }
    return { batched: events / ((performance.now() - start) / 1000) };
  },
};

/** A stream per target, filled once (untimed) and read whole by every catch-up pass. */
const catchUpStreams = new Map<string, { url: string; events: number }>();
const CATCH_UP_EVENTS = 20_000;

async function catchUpStream(target: Target): Promise<{ url: string; events: number }> {
  const existing = catchUpStreams.get(target.name);
  if (existing) return existing;
  const url = streamUrl(target, "catchup");
  await createJsonStream(url);
  for (let b = 0; b < CATCH_UP_EVENTS / 100; b++) {
    await appendJson(url, JSON.stringify(Array.from({ length: 100 }, (_, k) => agentEvent(b * 100 + k))));
  }
  const stream = { url, events: CATCH_UP_EVENTS };
  catchUpStreams.set(target.name, stream);
  return stream;
}

const catchUp: Measurement = {
  title: "catch-up read",
  rows: [
    { key: "catchupEvents", label: `catch-up read of a whole ${CATCH_UP_EVENTS}-event stream`, unit: "events/s", higherIsBetter: true },
    { key: "catchupMB", label: "catch-up read, same, payload bytes", unit: "MB/s", higherIsBetter: true },
    { key: "catchupRequests", label: "catch-up read, GETs needed for the whole stream", unit: "requests", higherIsBetter: false },
  ],
  async run(target, scale) {
    const stream = await catchUpStream(target);
    const passes = scale < 1 ? 1 : 3;
    const samples: { seconds: number; bytes: number; requests: number }[] = [];
    for (let p = 0; p < passes; p++) {
      const start = performance.now();
      let offset = "-1";
      let bytes = 0;
      let events = 0;
      let requests = 0;
      for (; requests < 10_000; ) {
        const res = await call("GET", `${stream.url}?offset=${encodeURIComponent(offset)}`, { expect: [200] });
        requests += 1;
        const body = new Uint8Array(await res.arrayBuffer());
        bytes += body.byteLength;
        const messages = JSON.parse(new TextDecoder().decode(body)) as unknown[];
        events += messages.length;
        offset = res.headers.get("stream-next-offset") ?? offset;
        if (res.headers.get("stream-up-to-date") === "true") break;
      }
      const seconds = (performance.now() - start) / 1000;
      if (events !== stream.events) {
        throw new Error(`catch-up read of ${stream.url} returned ${events} events, expected ${stream.events}`);
      }
      samples.push({ seconds, bytes, requests });
    }
    const best = median(samples.map((s) => s.seconds));
    const first = samples[0]!;
    return {
      catchupEvents: stream.events / best,
      catchupMB: first.bytes / 1e6 / best,
      catchupRequests: first.requests,
    };
  },
};

/** A live reader that timestamps each message (by its `data.i`) as it arrives. */
interface LiveReader {
  seen(i: number, timeoutMs: number): Promise<number>;
  close(): void;
}

function makeSeenTracker() {
  const seenAt = new Map<number, number>();
  const waiters = new Map<number, (t: number) => void>();
  let failure: Error | null = null;
  return {
    record(messages: unknown[]) {
      const now = performance.now();
      for (const m of messages) {
        const i = (m as { data?: { i?: unknown } }).data?.i;
        if (typeof i !== "number") continue;
        seenAt.set(i, now);
        waiters.get(i)?.(now);
        waiters.delete(i);
      }
    },
    fail(err: Error) {
      failure = err;
    },
    seen(i: number, timeoutMs: number): Promise<number> {
      const at = seenAt.get(i);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(i);
          reject(failure ?? new Error(`live reader did not see message ${i} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.set(i, (t) => {
          clearTimeout(timer);
          resolve(t);
        });
      });
    },
  };
}

function longPollReader(url: string, startOffset: string): LiveReader {
  const tracker = makeSeenTracker();
  const abort = new AbortController();
  (async () => {
    let offset = startOffset;
    let cursor: string | null = null;
    while (!abort.signal.aborted) {
      const query = `offset=${encodeURIComponent(offset)}&live=long-poll${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await call("GET", `${url}?${query}`, { expect: [200, 204], signal: abort.signal });
      const text = await res.text();
      if (res.status === 200) tracker.record(JSON.parse(text) as unknown[]);
      offset = res.headers.get("stream-next-offset") ?? offset;
      cursor = res.headers.get("stream-cursor") ?? cursor;
    }
  })().catch((err: Error) => {
    if (!abort.signal.aborted) tracker.fail(err);
  });
  return { seen: tracker.seen, close: () => abort.abort() };
}

function sseReader(url: string, startOffset: string): LiveReader {
  const tracker = makeSeenTracker();
  const abort = new AbortController();
  (async () => {
    let offset = startOffset;
    let cursor: string | null = null;
    // The servers end an SSE response after a while; reconnect from the last control offset.
    while (!abort.signal.aborted) {
      const query = `offset=${encodeURIComponent(offset)}&live=sse${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await call("GET", `${url}?${query}`, { expect: [200], signal: abort.signal });
      if (!res.body) throw new Error(`SSE response without a body from ${url}`);
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = "message";
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (data.length === 0) continue;
          const payload = JSON.parse(data.join("\n")) as unknown;
          if (event === "data") tracker.record(Array.isArray(payload) ? payload : [payload]);
          else if (event === "control") {
            const control = payload as { streamNextOffset?: string; streamCursor?: string };
            offset = control.streamNextOffset ?? offset;
            cursor = control.streamCursor ?? cursor;
          }
        }
      }
    }
  })().catch((err: Error) => {
    if (!abort.signal.aborted) tracker.fail(err);
  });
  return { seen: tracker.seen, close: () => abort.abort() };
}

function latencyMeasurement(mode: "long-poll" | "sse"): Measurement {
  const key = mode === "sse" ? "sse" : "lp";
  return {
    title: `append→live-reader latency (${mode})`,
    rows: [
      { key: `${key}P50`, label: `append→live-reader latency, ${mode} reader, p50`, unit: "ms", higherIsBetter: false },
      { key: `${key}P99`, label: `append→live-reader latency, ${mode} reader, p99`, unit: "ms", higherIsBetter: false },
    ],
    async run(target, scale) {
      const url = streamUrl(target, `latency-${mode}`);
      const tail = await createJsonStream(url);
      const reader = mode === "sse" ? sseReader(url, tail) : longPollReader(url, tail);
      try {
        // Let the reader's first request reach the server and park at the tail.
        await sleep(200);
        const n = count(200, scale);
        const limitMs = 20_000;
        const latencies: number[] = [];
        const start = performance.now();
        for (let i = 0; i < n && performance.now() - start < limitMs; i++) {
          const t0 = performance.now();
          const seen = reader.seen(i, 10_000);
          await appendJson(url, JSON.stringify(agentEvent(i)));
          latencies.push((await seen) - t0);
          // A long-poll reader re-polls after each message; give it time to park again.
          await sleep(5);
        }
        return { [`${key}P50`]: percentile(latencies, 50), [`${key}P99`]: percentile(latencies, 99) };
      } finally {
        reader.close();
      }
    },
  };
}

/** A runner socket: frames are queued; every wait is bounded. */
async function openRunnerSocket(target: Target) {
  const runId = `bench-${process.pid}-${++streamCounter}`;
  const created = await call("POST", `${target.url}/v1/runs`, {
    body: JSON.stringify({ runId, agent: { name: "bench" } }),
    headers: { "content-type": JSON_TYPE, authorization: `Bearer ${API_KEY}` },
    expect: [201],
  });
  const { runnerToken } = (await created.json()) as { runnerToken: string };
  const wsUrl = `${target.url.replace(/^http/, "ws")}/v1/runs/${runId}/runner?token=${encodeURIComponent(runnerToken)}`;
  const ws = new WebSocket(wsUrl);
  const frames: Record<string, unknown>[] = [];
  let notify: (() => void) | null = null;
  let closed: string | null = null;
  ws.addEventListener("message", (event) => {
    frames.push(JSON.parse(String(event.data)) as Record<string, unknown>);
    notify?.();
  });
  ws.addEventListener("close", (event) => {
    closed = `closed ${event.code} ${event.reason}`;
    notify?.();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`runner socket ${wsUrl} did not open in 10 s`)), 10_000);
    ws.addEventListener("open", () => {
      clearTimeout(timer);
      resolve();
    });
    ws.addEventListener("error", () => {
      clearTimeout(timer);
      reject(new Error(`runner socket ${wsUrl} failed to open`));
    });
  });
  const next = async (type: string, timeoutMs = 10_000): Promise<Record<string, unknown>> => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const frame = frames.shift();
      if (frame) {
        if (frame.type === type) return frame;
        throw new UnexpectedResponse(`runner socket ${wsUrl}: expected a ${type} frame, got ${JSON.stringify(frame)}`);
      }
      if (closed) throw new UnexpectedResponse(`runner socket ${wsUrl} ${closed} while waiting for ${type}`);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`runner socket ${wsUrl}: no ${type} frame within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        notify = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      notify = null;
    }
  };
  ws.send(JSON.stringify({ type: "hello", runnerId: "bench-runner", lastSourceSeq: 0 }));
  const claimed = await next("claimed");
  return { ws, epoch: claimed.epoch as number, next };
}

const runnerIngest: Measurement = {
  title: "runner ingest",
  rows: [
    {
      key: "ingest",
      label: "run-log ingest, 100-event frames: ours = runner WebSocket `events`→`ack`; reference = the same events as 100-event JSON POSTs (it has no runner socket)",
      unit: "events/s",
      higherIsBetter: true,
    },
  ],
  async run(target, scale) {
    const frames = count(60, scale);
    const limitMs = 15_000;
    const batchOf = (f: number) => Array.from({ length: 100 }, (_, k) => runnerEvent(f * 100 + k + 1));
    if (target.hasRunnerSocket) {
      const runner = await openRunnerSocket(target);
      try {
        const start = performance.now();
        let events = 0;
        for (let f = 0; f < frames && performance.now() - start < limitMs; f++) {
          runner.ws.send(JSON.stringify({ type: "events", epoch: runner.epoch, events: batchOf(f) }));
          const ack = await runner.next("ack");
          if (ack.highestSourceSeq !== (f + 1) * 100) {
            throw new UnexpectedResponse(`runner ack ${JSON.stringify(ack)} after frame ${f}, expected ${(f + 1) * 100}`);
          }
          events += 100;
        }
        return { ingest: events / ((performance.now() - start) / 1000) };
      } finally {
        runner.ws.close();
      }
    }
    const url = streamUrl(target, "ingest");
    await createJsonStream(url);
    const start = performance.now();
    let events = 0;
    for (let f = 0; f < frames && performance.now() - start < limitMs; f++) {
      await appendJson(url, JSON.stringify(batchOf(f)));
      events += 100;
    }
    return { ingest: events / ((performance.now() - start) / 1000) };
  },
};

const MEASUREMENTS: Measurement[] = [
  roundTrip,
  sequentialSingle,
  batched,
  catchUp,
  latencyMeasurement("long-poll"),
  latencyMeasurement("sse"),
  runnerIngest,
];

// ---------------------------------------------------------------------------------------------
// Statistics and reporting

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function median(values: number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

function fmt(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return "–";
  if (value >= 100) return Math.round(value).toLocaleString("en-US");
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function ratio(ours: number | undefined, ref: number | undefined): string {
  if (ours === undefined || ref === undefined || !ref || Number.isNaN(ours) || Number.isNaN(ref)) return "–";
  return `${(ours / ref).toFixed(2)}×`;
}

/** Read-only: the commit and whether src/ has uncommitted edits (wrangler dev serves the work tree). */
function gitState(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "wrangler.toml"], { cwd: REPO, encoding: "utf8" }).trim();
    return dirty ? `${head} + uncommitted changes under src/ (${dirty.split("\n").length} files)` : `${head} (src/ clean)`;
  } catch {
    return "unknown (no git)";
  }
}

function machine(): string[] {
  const cpuinfo = fs.existsSync("/proc/cpuinfo") ? fs.readFileSync("/proc/cpuinfo", "utf8") : "";
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? "unknown";
  const version = (pkg: string) =>
    (JSON.parse(fs.readFileSync(path.join(REPO, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;
  return [
    `date: ${new Date().toISOString()}`,
    `cpus: ${os.availableParallelism()} × ${model}`,
    `memory: ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `os: ${os.type()} ${os.release()}`,
    `node: ${process.version}; wrangler: ${version("wrangler")}; @durable-streams/server: ${version("@durable-streams/server")}`,
    `code under test: ${gitState()}`,
    `load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`,
    `rounds: ${ROUNDS}`,
  ];
}

// ---------------------------------------------------------------------------------------------
// Main

const targets: Target[] = [];
let floorWorker: Awaited<ReturnType<typeof startFloorWorker>> | null = null;
let stopping: Promise<void> | null = null;
function stopAll(): Promise<void> {
  stopping ??= Promise.allSettled([...targets.map((t) => t.stop()), ...(floorWorker ? [floorWorker.stop()] : [])]).then(
    () => undefined,
  );
  return stopping;
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping servers`);
    void stopAll().then(() => process.exit(130));
  });
}
const overall = setTimeout(() => {
  console.error(`benchmark exceeded ${OVERALL_LIMIT_MS / 60_000} min; stopping servers`);
  void stopAll().then(() => process.exit(2));
}, OVERALL_LIMIT_MS);

async function main(): Promise<void> {
  const info = machine();
  for (const line of info) console.log(line);
  console.log("\nstarting servers…");
  // The two `wrangler dev`s start one after the other: started together they can race for the
  // same internal port ("Address already in use (socket direct:1:default)"). Each gets one retry,
  // since other jobs on the machine start wrangler dev too.
  const retryOnce = <T>(start: () => Promise<T>) => start().catch(() => start());
  const references = Promise.allSettled([startReference("file"), startReference("memory")]);
  const ours = await Promise.allSettled([retryOnce(startOurs)]);
  const floor = await Promise.allSettled([retryOnce(startFloorWorker)]);
  const started = [...ours, ...(await references)];
  if (floor[0]?.status === "fulfilled") floorWorker = floor[0].value;
  for (const s of started) if (s.status === "fulfilled") targets.push(s.value);
  for (const s of [...floor, ...started]) if (s.status === "rejected") throw s.reason;
  for (const t of targets) console.log(`  ${t.name.padEnd(8)} ${t.url}  (${t.label})`);
  console.log(`  floor    ${floorWorker?.url}  (bench/floor-worker.ts under wrangler dev)`);

  const results = new Map<string, Map<string, number[]>>(); // row key → target → samples
  for (const m of MEASUREMENTS) {
    console.log(`\n${m.title}`);
    for (const t of targets) await m.run(t, 0.1); // warm-up, discarded
    for (let round = 0; round < ROUNDS; round++) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const t of order) {
        const values = await m.run(t, 1);
        for (const row of m.rows) {
          const value = values[row.key];
          if (value === undefined) continue;
          const byTarget = results.get(row.key) ?? new Map<string, number[]>();
          results.set(row.key, byTarget);
          const samples = byTarget.get(t.name) ?? [];
          byTarget.set(t.name, samples);
          samples.push(value);
        }
        const summary = m.rows.map((row) => `${fmt(values[row.key])} ${row.unit}`).join(", ");
        console.log(`  round ${round + 1} ${t.name.padEnd(8)} ${summary}`);
      }
    }
  }

  const value = (key: string, target: string) => {
    const samples = results.get(key)?.get(target);
    return samples && samples.length > 0 ? median(samples) : undefined;
  };
  const lines = [
    "| measurement | unit | ours | reference (file store) | ours/ref (file) | reference (memory store) | ours/ref (memory) |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const m of MEASUREMENTS) {
    for (const row of m.rows) {
      const ours = value(row.key, "ours");
      const file = value(row.key, "ref-file");
      const mem = value(row.key, "ref-mem");
      const better = row.higherIsBetter ? "higher is better" : "lower is better";
      lines.push(
        `| ${row.label} | ${row.unit} (${better}) | ${fmt(ours)} | ${fmt(file)} | ${ratio(ours, file)} | ${fmt(mem)} | ${ratio(ours, mem)} |`,
      );
    }
  }
  console.log(`\nmedian of ${ROUNDS} rounds per cell\n`);
  console.log(lines.join("\n"));
  console.log(`\nload average at end: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  // Anything the servers logged as an error during the run (wrangler's offline `Request.cf`
  // warning is expected here: the sandbox has no route to workers.cloudflare.com).
  for (const t of targets) {
    const lines = t.output().split("\n");
    const errors = lines.filter(
      (line, i) =>
        /\[error\]|\berror:|exception|uncaught/i.test(line) &&
        !/Request\.cf|getaddrinfo ENOTFOUND workers\.cloudflare\.com/.test(line) &&
        !/Request\.cf/.test(lines[i - 1] ?? ""),
    );
    if (errors.length > 0) console.log(`\n${t.name} logged ${errors.length} error line(s), first ones:\n${errors.slice(0, 10).join("\n")}`);
  }
}

try {
  await main();
} catch (err) {
  console.error(`\nbenchmark failed: ${err instanceof Error ? err.message : String(err)}`);
  for (const t of targets) {
    const log = t.output().trim();
    if (log) console.error(`\n${t.name} (${t.url}) output, last 3000 chars:\n${log.slice(-3000)}`);
  }
  process.exitCode = 1;
} finally {
  clearTimeout(overall);
  await stopAll();
}
