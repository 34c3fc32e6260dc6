/** 1,000 runs at once (bounded client concurrency): each claimed, sent 10 events and completed. */
import { performance } from "node:perf_hooks";
import { count, type Measurement } from "./measurement.ts";
import { runnerEvent } from "./payloads.ts";
import { openRunnerSocket } from "./runner-socket.ts";
import type { Target } from "./targets.ts";
import { within } from "./viewer-socket.ts";

const RUNS = 1000;
const CONCURRENCY = 50;
const EVENTS = Array.from({ length: 10 }, (_, i) => runnerEvent(i + 1));

async function oneRun(target: Target): Promise<void> {
  const runner = await openRunnerSocket(target);
  try {
    await runner.sendEvents(EVENTS, EVENTS.length);
    await runner.complete();
  } finally {
    runner.ws.close();
  }
}

export const manyRuns: Measurement = {
  id: "runs",
  title: `${RUNS.toLocaleString("en-US")} runs at once`,
  oursOnly: true,
  rows: [
    {
      key: "runsPerSec",
      label: `${RUNS.toLocaleString("en-US")} runs, ${CONCURRENCY} at a time: create, claim over the runner socket, 10 events, complete`,
      unit: "runs/s",
      higherIsBetter: true,
    },
    { key: "rssBeforeMB", label: "server memory (workerd RSS) before those runs", unit: "MB", higherIsBetter: false },
    { key: "rssAfterMB", label: "server memory (workerd RSS) right after them", unit: "MB", higherIsBetter: false },
    {
      key: "idleRunKB",
      label: "server memory per finished, idle run (RSS growth ÷ runs; objects not yet evicted)",
      unit: "KB",
      higherIsBetter: false,
    },
  ],
  async run(target, scale) {
    const total = count(RUNS, scale);
    const rssBefore = target.rss();
    const failures: Error[] = [];
    let next = 0;
    const start = performance.now();
    const worker = async () => {
      while (next < total) {
        next += 1;
        await oneRun(target).catch((error: Error) => failures.push(error));
      }
    };
    await within(Promise.all(Array.from({ length: CONCURRENCY }, worker)), 300_000, `${total} runs finishing`);
    const seconds = (performance.now() - start) / 1000;
    if (failures.length > 0) {
      throw new Error(`${failures.length} of ${total} runs failed; the first: ${failures[0]?.message}`);
    }
    const rssAfter = target.rss();
    return {
      runsPerSec: total / seconds,
      rssBeforeMB: rssBefore / 2 ** 20,
      rssAfterMB: rssAfter / 2 ** 20,
      idleRunKB: (rssAfter - rssBefore) / 1024 / total,
    };
  },
};
