/**
 * Live readers (long-poll and SSE) that follow a stream from an offset and timestamp each message
 * as it arrives, for the append→reader latency measurement.
 */
import { performance } from "node:perf_hooks";
import { call } from "./client.ts";

/** A live reader that timestamps each message (by its `data.i`) as it arrives. */
export interface LiveReader {
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

export function longPollReader(url: string, startOffset: string): LiveReader {
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

export function sseReader(url: string, startOffset: string): LiveReader {
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
