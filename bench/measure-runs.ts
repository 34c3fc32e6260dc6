/**
 * 1,000 runs at once (bounded client concurrency): every run is created, claimed over its runner
 * socket and sent 10 events, and stays open and idle until all of them are; then every run is
 * completed. All must succeed. Memory is read with all runs idle (each object holding its
 * runner's hibernatable socket) and again after they finished.
 */
import { performance } from "node:perf_hooks";
import { count, type Measurement } from "./measurement.ts";
import { runnerEvent } from "./payloads.ts";
import { openRunnerSocket, type RunnerSocket } from "./runner-socket.ts";
import { sleep } from "./sleep.ts";
import { within } from "./viewer-socket.ts";

const RUNS = 1000;
const CONCURRENCY = 50;
const EVENTS = Array.from({ length: 10 }, (_, i) => runnerEvent(i + 1));
/** Bound on each step of one run: with 50 in flight on a busy machine, a step can queue for seconds. */
const STEP_MS = 60_000;

/** Runs `task` for 0..total-1, `CONCURRENCY` at a time; throws naming how many failed. */
async function inParallel(total: number, what: string, task: (i: number) => Promise<void>): Promise<void> {
  const failures: Error[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next;
      next += 1;
      await task(i).catch((error: Error) => failures.push(error));
    }
  };
  await within(Promise.all(Array.from({ length: CONCURRENCY }, worker)), 300_000, `${total} runs ${what}`);
  if (failures.length > 0)
    throw new Error(`${failures.length} of ${total} runs failed ${what}; the first: ${failures[0]?.message}`);
}

export const manyRuns: Measurement = {
  id: "runs",
  title: `${RUNS.toLocaleString("en-US")} runs at once`,
  oursOnly: true,
  maxRounds: 3,
  rows: [
    {
      key: "runsPerSec",
      label: `${RUNS.toLocaleString("en-US")} runs, ${CONCURRENCY} requests at a time: each created, claimed over its runner socket, sent 10 events; all open at once; then each completed`,
      unit: "runs/s",
      higherIsBetter: true,
    },
    { key: "rssBeforeMB", label: "server memory (workerd RSS) before those runs", unit: "MB", higherIsBetter: false },
    {
      key: "rssAfterMB",
      label: "server memory (workerd RSS) after they all finished",
      unit: "MB",
      higherIsBetter: false,
    },
    {
      key: "idleRunKB",
      label: `server memory per idle run (RSS growth with all ${RUNS.toLocaleString("en-US")} claimed, runner socket open, nothing happening)`,
      unit: "KB",
      higherIsBetter: false,
    },
  ],
  async run(target, scale) {
    const total = count(RUNS, scale);
    const rssBefore = target.rss();
    const runners: RunnerSocket[] = [];
    const start = performance.now();
    try {
      await inParallel(total, "claiming", async () => {
        const runner = await openRunnerSocket(target, undefined, STEP_MS);
        runners.push(runner);
        await runner.sendEvents(EVENTS, EVENTS.length);
      });
      const busySeconds = (performance.now() - start) / 1000;
      await sleep(1_000); // let the last acks and socket buffers settle before reading memory
      const rssIdle = target.rss();
      const finishing = performance.now();
      await inParallel(total, "completing", async (i) => {
        await (runners[i] as RunnerSocket).complete();
      });
      const seconds = busySeconds + (performance.now() - finishing) / 1000;
      return {
        runsPerSec: total / seconds,
        rssBeforeMB: rssBefore / 2 ** 20,
        rssAfterMB: target.rss() / 2 ** 20,
        idleRunKB: (rssIdle - rssBefore) / 1024 / total,
      };
    } finally {
      for (const runner of runners) runner.ws.close();
    }
  },
};
