/** Catch-up read: a whole pre-filled stream read from the start, as fast as the server serves it. */
import { performance } from "node:perf_hooks";
import { appendJson, call, createJsonStream, streamUrl } from "./client.ts";
import type { Measurement } from "./measurement.ts";
import { agentEvent } from "./payloads.ts";
import { median } from "./stats.ts";
import type { Target } from "./targets.ts";

/** A stream per target, filled once (untimed) and read whole by every catch-up pass. */
const catchUpStreams = new Map<string, { url: string; events: number }>();
const CATCH_UP_EVENTS = 20_000;

/** Creates the JSON stream at `url` and appends the catch-up read's events, 100 to a POST. */
export async function fillCatchUpStream(url: string): Promise<void> {
  await createJsonStream(url);
  for (let b = 0; b < CATCH_UP_EVENTS / 100; b++) {
    await appendJson(url, JSON.stringify(Array.from({ length: 100 }, (_, k) => agentEvent(b * 100 + k))));
  }
}

async function catchUpStream(target: Target): Promise<{ url: string; events: number }> {
  const existing = catchUpStreams.get(target.name);
  if (existing) return existing;
  const url = streamUrl(target, "catchup");
  await fillCatchUpStream(url);
  const stream = { url, events: CATCH_UP_EVENTS };
  catchUpStreams.set(target.name, stream);
  return stream;
}

export const catchUp: Measurement = {
  id: "catchup",
  title: "catch-up read",
  rows: [
    {
      key: "catchupEvents",
      label: `catch-up read of a whole ${CATCH_UP_EVENTS}-event stream`,
      unit: "events/s",
      higherIsBetter: true,
    },
    { key: "catchupMB", label: "catch-up read, same, payload bytes", unit: "MB/s", higherIsBetter: true },
    {
      key: "catchupRequests",
      label: "catch-up read, GETs needed for the whole stream",
      unit: "requests",
      higherIsBetter: false,
    },
    {
      key: "catchupCpu",
      label: "catch-up read, same: server process CPU per 1,000 events read (user + system, all its threads)",
      unit: "ms",
      higherIsBetter: false,
    },
  ],
  async run(target, scale) {
    const stream = await catchUpStream(target);
    const passes = scale < 1 ? 1 : 3;
    const samples: { seconds: number; bytes: number; requests: number }[] = [];
    const cpu = target.cpuMs();
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
      catchupCpu: ((target.cpuMs() - cpu) / (stream.events * passes)) * 1000,
    };
  },
};
