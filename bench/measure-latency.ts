/** Append→live-reader latency: time from an append until a parked reader sees the message. */
import { performance } from "node:perf_hooks";
import { appendJson, createJsonStream, streamUrl } from "./client.ts";
import { longPollReader, sseReader } from "./live-readers.ts";
import { count, type Measurement } from "./measurement.ts";
import { agentEvent } from "./payloads.ts";
import { sleep } from "./sleep.ts";
import { percentile } from "./stats.ts";

export function latencyMeasurement(mode: "long-poll" | "sse"): Measurement {
  const key = mode === "sse" ? "sse" : "lp";
  return {
    id: "latency",
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
