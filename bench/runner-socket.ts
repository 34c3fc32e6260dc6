/** A run and the runner side of it over its WebSocket, as a runner would open it (ours only). */
import { performance } from "node:perf_hooks";
import { BENCH_API_KEY, call, JSON_TYPE, nextId, UnexpectedResponse } from "./client.ts";
import type { Target } from "./targets.ts";

export interface BenchRun {
  runId: string;
  runnerToken: string;
  viewerToken: string;
}

export async function createRun(target: Target, body: Record<string, unknown> = {}): Promise<BenchRun> {
  const runId = `bench-${process.pid}-${nextId()}`;
  const created = await call("POST", `${target.url}/v1/runs`, {
    body: JSON.stringify({ runId, agent: { name: "bench" }, ...body }),
    headers: { "content-type": JSON_TYPE, authorization: `Bearer ${BENCH_API_KEY}` },
    expect: [201],
  });
  const { runnerToken, viewerToken } = (await created.json()) as { runnerToken: string; viewerToken: string };
  return { runId, runnerToken, viewerToken };
}

export type RunnerSocket = Awaited<ReturnType<typeof openRunnerSocket>>;

/**
 * Opens the runner socket of `run` (a new run if none) and claims it. Frames queue; every wait is
 * bounded by `waitMs` (longer for the 1,000-runs pass, where 50 runs contend for one machine).
 */
export async function openRunnerSocket(target: Target, given?: BenchRun, waitMs = 10_000) {
  const run = given ?? (await createRun(target));
  // The runner token goes in the Authorization header: the edge takes only viewer tokens in a URL.
  const Ctor = WebSocket as unknown as new (url: string, init: { headers: Record<string, string> }) => WebSocket;
  const wsUrl = `${target.url.replace(/^http/, "ws")}/v1/runs/${run.runId}/runner`;
  const ws = new Ctor(wsUrl, {
    headers: { authorization: `Bearer ${run.runnerToken}` },
  });
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
    const timer = setTimeout(() => reject(new Error(`runner socket ${wsUrl} did not open in ${waitMs} ms`)), waitMs);
    ws.addEventListener("open", () => {
      clearTimeout(timer);
      resolve();
    });
    ws.addEventListener("error", () => {
      clearTimeout(timer);
      reject(new Error(`runner socket ${wsUrl} failed to open`));
    });
  });
  const next = async (type: string, timeoutMs = waitMs): Promise<Record<string, unknown>> => {
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
  const epoch = claimed.epoch as number;
  /** Sends one `events` frame and waits for its ack, which must cover `highest`. */
  const sendEvents = async (events: unknown[], highest: number) => {
    ws.send(JSON.stringify({ type: "events", epoch, events }));
    const ack = await next("ack");
    if (ack.highestSourceSeq !== highest) {
      throw new UnexpectedResponse(`runner ack ${JSON.stringify(ack)} on ${run.runId}, expected ${highest}`);
    }
  };
  const complete = async () => {
    ws.send(JSON.stringify({ type: "complete", epoch, outcome: { status: "succeeded", exitCode: 0 } }));
    await next("completed");
  };
  return { run, ws, epoch, next, sendEvents, complete };
}
