/** The runner side of a run over its WebSocket, as a runner would open it (ours only). */
import { performance } from "node:perf_hooks";
import { call, JSON_TYPE, nextId, UnexpectedResponse } from "./client.ts";
import type { Target } from "./targets.ts";

const API_KEY = "dev-key-alpha";

/** A runner socket: frames are queued; every wait is bounded. */
export async function openRunnerSocket(target: Target) {
  const runId = `bench-${process.pid}-${nextId()}`;
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
