/** A viewer of a run over its watch WebSocket (ours only), light enough to open a thousand of. */
import { performance } from "node:perf_hooks";
import type { BenchRun } from "./runner-socket.ts";
import type { Target } from "./targets.ts";

export interface Viewer {
  /** Every event's seq, in the order received. */
  seqs: number[];
  /** Resolves on the first `status` frame: the replay is done and the viewer is live. */
  attached: Promise<void>;
  /** Resolves on `end`. */
  ended: Promise<void>;
  /** Resolves when the connection has ended (the socket's `close` event). */
  closed: Promise<void>;
  close(): void;
}

interface WatchFrame {
  type: string;
  events?: { seq: number; sourceSeq?: number; source: string }[];
}

/** `onRunnerEvent(sourceSeq, receivedAt)` for each runner event, as its frame arrives. */
export function openViewer(
  target: Target,
  run: BenchRun,
  onRunnerEvent: (sourceSeq: number, at: number) => void,
): Viewer {
  const url = `${target.url.replace(/^http/, "ws")}/v1/runs/${run.runId}/watch?after=0&token=${encodeURIComponent(run.viewerToken)}`;
  const ws = new WebSocket(url);
  const seqs: number[] = [];
  let onAttached: () => void = () => undefined;
  let onEnded: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const failure = new Promise<never>((_, reject) => (fail = reject));
  failure.catch(() => undefined); // surfaced through attached/ended
  const attached = Promise.race([new Promise<void>((resolve) => (onAttached = resolve)), failure]);
  const ended = Promise.race([new Promise<void>((resolve) => (onEnded = resolve)), failure]);
  // A caller that never waits for the end (the storm) must not crash on a rejection nobody reads.
  ended.catch(() => undefined);
  let done = false;
  const closed = new Promise<void>((resolve) => ws.addEventListener("close", () => resolve()));
  ws.addEventListener("message", (event) => {
    const at = performance.now();
    const frame = JSON.parse(String(event.data)) as WatchFrame;
    if (frame.type === "events") {
      for (const e of frame.events ?? []) {
        seqs.push(e.seq);
        if (e.source === "runner" && e.sourceSeq !== undefined) onRunnerEvent(e.sourceSeq, at);
      }
    } else if (frame.type === "status") onAttached();
    else if (frame.type === "end") {
      done = true;
      onEnded();
    } else if (frame.type === "error") fail(new Error(`viewer of ${run.runId}: ${String(event.data)}`));
  });
  ws.addEventListener("close", (event) => {
    if (!done) fail(new Error(`viewer of ${run.runId} closed ${event.code} ${event.reason} before end`));
  });
  ws.addEventListener("error", () => fail(new Error(`viewer socket ${url} failed`)));
  return {
    seqs,
    attached,
    ended,
    closed,
    close: () => {
      done = true;
      ws.close();
    },
  };
}

/** `promise`, or a rejection naming what did not happen within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
