/**
 * A deploy's reconnect storm, simulated locally (`npm run bench -- --only storm`): runs with a
 * runner socket and viewers each (10,000 sockets in all), every socket dropped at once as a deploy
 * drops them, then every one reopened at once (the worst case: no client's backoff jitter) until
 * each runner is claimed again and each viewer has replayed and is live. Prints the storm's
 * duration, its peak rate of sockets re-established, and the server's peak CPU and memory.
 */
import { performance } from "node:perf_hooks";
import { runnerEvent } from "./payloads.ts";
import { createRun, openRunnerSocket, type BenchRun, type RunnerSocket } from "./runner-socket.ts";
import type { Target } from "./targets.ts";
import { openViewer, type Viewer, within } from "./viewer-socket.ts";

const VIEWERS_PER_RUN = 4;
const SAMPLE_MS = 100;
const STEP_MS = 120_000;

export interface StormReport {
  runs: number;
  sockets: number;
  setupMs: number;
  stormMs: number;
  /** Sockets re-established in the busiest SAMPLE_MS, per second. */
  peakPerSecond: number;
  /** Server CPU in the busiest sample, in cores (1.0 = one core busy). */
  peakCores: number;
  meanCores: number;
  rssBeforeMB: number;
  rssPeakMB: number;
  failures: number;
  firstFailure: string | null;
}

/** Runs `task` for 0..total-1, `width` at a time. */
async function inParallel(total: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next;
      next += 1;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
}

export async function measureStorm(target: Target, sockets = 10_000): Promise<StormReport> {
  const runs = Math.max(1, Math.round(sockets / (1 + VIEWERS_PER_RUN)));
  const started = performance.now();
  const made: BenchRun[] = [];
  let runners: RunnerSocket[] = [];
  let viewers: Viewer[] = [];
  // Setup: each run created, claimed, sent 10 events, and watched by its viewers.
  await within(
    inParallel(runs, 50, async (i) => {
      const runner = await openRunnerSocket(target, await createRun(target), STEP_MS);
      await runner.sendEvents(
        Array.from({ length: 10 }, (_, n) => runnerEvent(n + 1)),
        10,
      );
      made[i] = runner.run;
      runners[i] = runner;
      const watching = Array.from({ length: VIEWERS_PER_RUN }, () => openViewer(target, runner.run, () => undefined));
      await Promise.all(watching.map((viewer) => viewer.attached));
      viewers.push(...watching);
    }),
    600_000,
    `${runs} runs set up with ${VIEWERS_PER_RUN} viewers each`,
  );
  const setupMs = performance.now() - started;
  const rssBefore = target.rss();

  // The deploy: every socket dropped at once.
  for (const runner of runners) runner.ws.close();
  for (const viewer of viewers) viewer.close();
  runners = [];
  viewers = [];

  const done: number[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  const samples: { at: number; cpuMs: number; rss: number }[] = [];
  const sampler = setInterval(
    () => samples.push({ at: performance.now(), cpuMs: target.cpuMs(), rss: target.rss() }),
    SAMPLE_MS,
  );
  const stormStart = performance.now();
  samples.push({ at: stormStart, cpuMs: target.cpuMs(), rss: target.rss() });
  const fail = (error: Error) => {
    failures++;
    firstFailure ??= error.message;
  };
  // Everyone back at once: each runner says hello again (claimed by its runner id), each viewer
  // replays the run's log and goes live.
  await within(
    Promise.all(
      made.flatMap((run) => [
        openRunnerSocket(target, run, STEP_MS).then((runner) => {
          done.push(performance.now());
          runners.push(runner);
        }, fail),
        ...Array.from({ length: VIEWERS_PER_RUN }, () => {
          const viewer = openViewer(target, run, () => undefined);
          viewers.push(viewer);
          return viewer.attached.then(() => {
            done.push(performance.now());
          }, fail);
        }),
      ]),
    ),
    600_000,
    `${made.length * (1 + VIEWERS_PER_RUN)} sockets re-established`,
  );
  const stormMs = performance.now() - stormStart;
  clearInterval(sampler);
  samples.push({ at: performance.now(), cpuMs: target.cpuMs(), rss: target.rss() });
  for (const runner of runners) runner.ws.close();
  for (const viewer of viewers) viewer.close();

  let peakPerSecond = 0;
  for (let from = stormStart; from < stormStart + stormMs; from += SAMPLE_MS) {
    const inWindow = done.filter((at) => at >= from && at < from + SAMPLE_MS).length;
    peakPerSecond = Math.max(peakPerSecond, (inWindow * 1000) / SAMPLE_MS);
  }
  let peakCores = 0;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1] as (typeof samples)[number];
    const b = samples[i] as (typeof samples)[number];
    if (b.at > a.at) peakCores = Math.max(peakCores, (b.cpuMs - a.cpuMs) / (b.at - a.at));
  }
  const first = samples[0] as (typeof samples)[number];
  const last = samples[samples.length - 1] as (typeof samples)[number];
  return {
    runs: made.length,
    sockets: made.length * (1 + VIEWERS_PER_RUN),
    setupMs,
    stormMs,
    peakPerSecond,
    peakCores,
    meanCores: (last.cpuMs - first.cpuMs) / Math.max(1, last.at - first.at),
    rssBeforeMB: rssBefore / 1e6,
    rssPeakMB: Math.max(...samples.map((sample) => sample.rss)) / 1e6,
    failures,
    firstFailure,
  };
}

export function printStorm(report: StormReport): void {
  const n = (value: number, digits = 0) => value.toLocaleString("en-US", { maximumFractionDigits: digits });
  console.log(
    `\nreconnect storm (npm run serve): ${n(report.runs)} runs × (1 runner + ${VIEWERS_PER_RUN} viewers) = ${n(report.sockets)} sockets, all dropped at once, all reopened at once\n`,
  );
  console.log("| measurement | value |");
  console.log("| --- | ---: |");
  console.log(`| setup (create, claim, 10 events, viewers attached) | ${n(report.setupMs / 1000, 1)} s |`);
  console.log(`| storm: drop to every runner claimed and every viewer live again | ${n(report.stormMs / 1000, 2)} s |`);
  console.log(`| sockets re-established per second, mean | ${n((report.sockets * 1000) / report.stormMs)} |`);
  console.log(`| sockets re-established per second, peak ${SAMPLE_MS} ms | ${n(report.peakPerSecond)} |`);
  console.log(`| server CPU during the storm, mean | ${n(report.meanCores, 2)} cores |`);
  console.log(`| server CPU, peak ${SAMPLE_MS} ms | ${n(report.peakCores, 2)} cores |`);
  console.log(`| server memory (workerd RSS) before the drop | ${n(report.rssBeforeMB)} MB |`);
  console.log(`| server memory, peak during the storm | ${n(report.rssPeakMB)} MB |`);
  console.log(`| sockets that failed to come back | ${n(report.failures)} |`);
  if (report.firstFailure) console.log(`\nfirst failure: ${report.firstFailure}`);
}
