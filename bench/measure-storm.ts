/**
 * A deploy's reconnect storm, simulated locally (`npm run bench -- --only storm`): runs with a
 * runner socket and 4 viewers each (10,000 sockets in all), then a deploy: `npm run serve` kills
 * its workerd and starts it again on the same data (SIGUSR2), so every socket drops at once and
 * every object wakes cold. Every client reconnects on its own, first at once, then with its real
 * backoff (bench/storm-client.ts): each runner says hello with its epoch and is claimed again,
 * each viewer resumes from its cursor. After the storm each runner sends 10 more events and
 * completes; each viewer must end with the run's exact transcript, every event once and in order.
 * Prints (bench/storm-report.ts) the storm's duration, reconnects per second, time to reattach,
 * failures by kind, and the server's CPU, memory and descriptors. One `npm run serve`, or several
 * where one workerd cannot hold every socket under the machine's open-files limit (planStorm).
 */
import os from "node:os";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { BENCH_API_KEY, call } from "./client.ts";
import { createRun } from "./runner-socket.ts";
import { count, type Failures, StormRunner, StormViewer } from "./storm-client.ts";
import {
  descriptorsFor,
  FDS_PER_CONNECTION,
  FDS_PER_OBJECT,
  findServe,
  listenCounters,
  openFiles,
  openFilesLimit,
  raiseOpenFiles,
  runQueueWaitMs,
  ServerWatch,
  serversFor,
} from "./storm-server.ts";
import type { Target } from "./targets.ts";
import { within } from "./viewer-socket.ts";

export const VIEWERS_PER_RUN = 4;
export const EVENTS_BEFORE = 10;
const EVENTS_AFTER = 10;
export const SAMPLE_MS = 100;
/**
 * How many `npm run serve` processes the storm runs on, and why: the bench's open-files limit is
 * raised first where the machine allows it (serve's workerd inherits it); where one workerd still
 * cannot hold every socket, the runs are spread over several, each restarted in the same deploy.
 */
export function planStorm(sockets: number): { servers: number; note: string } {
  const perRun = 1 + VIEWERS_PER_RUN;
  const raised = raiseOpenFiles(descriptorsFor(sockets, perRun));
  // serve's Node raises its soft limit to the hard one at start, and workerd inherits that.
  const limit = openFilesLimit(process.pid).hard;
  const { servers, perServer } = serversFor(sockets, perRun, limit);
  const why =
    servers === 1
      ? "one npm run serve"
      : `${servers} npm run serve processes: one workerd holds at most ${perServer.toLocaleString("en-US")} of these sockets under an open-files limit of ${limit.toLocaleString("en-US")} (${FDS_PER_CONNECTION} descriptors per connection, ${FDS_PER_OBJECT} per run object)`;
  return { servers, note: `${raised}; ${why}` };
}
/** Runs set up (or finished) at once: setup is not what is measured. */
const SETUP_WIDTH = 50;

/** One sample of every server (summed) and of the clients, this process. */
export interface Sample {
  at: number;
  serverCpuMs: number;
  /** Run-queue waits (runnable, no CPU free): how much the machine's other load held each back. */
  serverWaitMs: number;
  serverRss: number;
  clientCpuMs: number;
  clientWaitMs: number;
}

export interface StormReport {
  servers: number;
  runs: number;
  sockets: number;
  setupMs: number;
  setupRetries: number;
  /** Deploy (SIGUSR2) to the old workerd gone, and to the new one answering, as serve logged them. */
  goneMs: number | null;
  restartMs: number | null;
  /** Deploy to the last socket lost, as the clients saw it: how "at once" the drop was. */
  dropSpreadMs: number;
  /** Deploy to the last socket back. */
  stormMs: number;
  /** Per socket: deploy to claimed again (runner) or replayed and live again (viewer). */
  reattachMs: number[];
  /** The same, runners only. */
  runnerReattachMs: number[];
  /** The clients' event-loop delay during the storm, p99 and max (ms). */
  clientLoopDelayMs: { p99: number; max: number };
  /** Per socket: deploy to its upgrade answered (101), before any frame. */
  openMs: number[];
  peakPerSecond: number;
  samples: Sample[];
  rssBeforeMB: number;
  /** Open descriptors of each workerd before the deploy. */
  fdsBefore: number[];
  /** How each client saw its connection go, by kind. */
  drops: Map<string, number>;
  /** Failed attempts during the storm (each was retried), by kind and by whether workerd was back yet. */
  attempts: Map<string, number>;
  /** Runs not finished after the storm because one of their sockets never came back. */
  unfinishedRuns: number;
  /** Sockets that never came back, and the first reason. */
  lostForGood: number;
  firstLoss: string | null;
  /** Viewers whose transcript was not the run's log exactly, and the first difference. */
  wrongTranscripts: number;
  firstWrong: string | null;
  listenOverflows: number;
  loadBefore: string;
  loadAfter: string;
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

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** The first difference between a viewer's transcript and the run's log, or null. */
function transcriptDifference(viewer: StormViewer, lastSeq: number): string | null {
  if (viewer.problems.length > 0) return viewer.problems[0] as string;
  for (let i = 0; i < Math.max(lastSeq, viewer.seqs.length); i++) {
    if (viewer.seqs[i] !== i + 1) return `event ${i + 1} of ${lastSeq}: got seq ${viewer.seqs[i]}`;
  }
  const sent = EVENTS_BEFORE + EVENTS_AFTER;
  for (let i = 0; i < Math.max(sent, viewer.runnerSeqs.length); i++) {
    if (viewer.runnerSeqs[i] !== i + 1)
      return `runner event ${i + 1} of ${sent}: got sourceSeq ${viewer.runnerSeqs[i]}`;
  }
  return null;
}

/** Samples every server's workerd and this process's CPU since the previous call. */
function sampler(watches: ServerWatch[]): () => Sample {
  let client = process.cpuUsage();
  let clientWait = runQueueWaitMs("self") ?? 0;
  return () => {
    const servers = watches.map((watch) => watch.sample());
    const used = process.cpuUsage(client);
    client = process.cpuUsage();
    const wait = runQueueWaitMs("self") ?? clientWait;
    const clientWaitMs = wait - clientWait;
    clientWait = wait;
    return {
      at: performance.now(),
      serverCpuMs: servers.reduce((sum, x) => sum + x.cpuMs, 0),
      serverWaitMs: servers.reduce((sum, x) => sum + x.waitMs, 0),
      serverRss: servers.reduce((sum, x) => sum + x.rss, 0),
      clientCpuMs: (used.user + used.system) / 1000,
      clientWaitMs,
    };
  };
}

/** `servers`: one `npm run serve` or more (planStorm); run i lives on server i mod their count. */
/** For bench/storm-profile.ts: called once the deploy is sent, and awaited once every socket is back. */
export interface StormHooks {
  deployed?(): void;
  back?(): Promise<void>;
}

export async function measureStorm(servers: Target[], sockets = 10_000, hooks: StormHooks = {}): Promise<StormReport> {
  const runs = Math.max(1, Math.round(sockets / (1 + VIEWERS_PER_RUN)));
  const watches = servers.map((server) => new ServerWatch(findServe(server.url)));
  const setupAttempts: Failures = new Map();
  const made: { target: Target; runner: StormRunner; watching: StormViewer[] }[] = [];
  const started = performance.now();
  // Setup: each run created, claimed, sent its first events, and watched by its viewers.
  await within(
    inParallel(runs, SETUP_WIDTH, async (i) => {
      const target = servers[i % servers.length] as Target;
      const runner = new StormRunner(target, await createRun(target));
      await runner.connect(setupAttempts);
      await runner.sendEvents(EVENTS_BEFORE);
      const watching = Array.from({ length: VIEWERS_PER_RUN }, () => new StormViewer(target, runner.run));
      await Promise.all(watching.map((viewer) => viewer.connect(setupAttempts)));
      made[i] = { target, runner, watching };
    }),
    900_000,
    `${runs} runs set up with ${VIEWERS_PER_RUN} viewers each`,
  );
  const setupMs = performance.now() - started;
  const fdsBefore = watches.map((watch) => openFiles(watch.pid()));
  const loadBefore = load();

  // The deploy. Each client notices its drop and reconnects by itself.
  const attempts: Failures = new Map();
  const drops: Failures = new Map();
  const lostAt: number[] = [];
  const outcomes = new Map<StormRunner | StormViewer, PromiseSettledResult<number>>();
  const back = made
    .flatMap(({ runner, watching }) => [runner, ...watching])
    .map((client) =>
      client
        .lost()
        .then((kind) => {
          lostAt.push(performance.now());
          count(drops, kind);
          return client.connect(attempts);
        })
        .then(
          (at) => outcomes.set(client, { status: "fulfilled", value: at }),
          (reason) => outcomes.set(client, { status: "rejected", reason }),
        ),
    );
  const listenBefore = listenCounters();
  const sample = sampler(watches);
  sample();
  const samples: Sample[] = [sample()];
  const every = setInterval(() => samples.push(sample()), SAMPLE_MS);
  const rssBefore = (samples[0] as Sample).serverRss;
  const outputBefore = servers.map((server) => server.output().length);
  // How late the clients' own event loop ran: every time measured here includes it.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const dropAt = performance.now();
  for (const watch of watches) watch.deploy();
  hooks.deployed?.();
  await within(Promise.all(back), 600_000, `${back.length} sockets back after the deploy`);
  await hooks.back?.();
  clearInterval(every);
  loopDelay.disable();
  samples.push(sample());
  const listenAfter = listenCounters();

  const reattachMs: number[] = [];
  const runnerReattachMs: number[] = [];
  const openMs: number[] = [];
  let lostForGood = 0;
  let firstLoss: string | null = null;
  for (const [client, outcome] of outcomes) {
    if (outcome.status === "fulfilled") {
      reattachMs.push(outcome.value - dropAt);
      openMs.push(client.openedAt - dropAt);
      if (client instanceof StormRunner) runnerReattachMs.push(outcome.value - dropAt);
    } else {
      lostForGood++;
      firstLoss ??= (outcome.reason as Error).message;
    }
  }
  const stormMs = Math.max(0, ...reattachMs);
  let peakPerSecond = 0;
  for (let from = 0; from < stormMs; from += SAMPLE_MS) {
    const inWindow = reattachMs.filter((ms) => ms >= from && ms < from + SAMPLE_MS).length;
    peakPerSecond = Math.max(peakPerSecond, (inWindow * 1000) / SAMPLE_MS);
  }
  const restarts = servers.map(
    (server, i) => /restarted in (\d+) ms/.exec(server.output().slice(outputBefore[i]))?.[1],
  );
  const restartMs = restarts.every((ms) => ms !== undefined) ? Math.max(...restarts.map(Number)) : null;
  const gone = servers.map(
    (server, i) => /workerd gone (\d+) ms after/.exec(server.output().slice(outputBefore[i]))?.[1],
  );
  const goneMs = gone.every((ms) => ms !== undefined) ? Math.max(...gone.map(Number)) : null;

  // After the storm: every run whose sockets all came back goes on (more events, live to its
  // viewers) and completes; each viewer must then hold the run's log exactly.
  const whole = made.filter(({ runner, watching }) =>
    [runner, ...watching].every((client) => outcomes.get(client)?.status === "fulfilled"),
  );
  let wrongTranscripts = 0;
  let firstWrong: string | null = null;
  const finishing = within(
    inParallel(whole.length, SETUP_WIDTH, async (k) => {
      const { target, runner, watching } = whole[k] as (typeof whole)[number];
      await runner.sendEvents(EVENTS_AFTER);
      await runner.complete();
      await within(
        Promise.all(watching.map((viewer) => viewer.end())),
        30_000,
        `the end frame at all ${VIEWERS_PER_RUN} viewers of ${runner.run.runId}`,
      );
      const res = await call("GET", `${target.url}/v1/runs/${runner.run.runId}`, {
        headers: { authorization: `Bearer ${BENCH_API_KEY}` },
        expect: [200],
      });
      const { lastSeq } = (await res.json()) as { lastSeq: number };
      for (const viewer of watching) {
        const difference = transcriptDifference(viewer, lastSeq);
        if (difference === null) continue;
        wrongTranscripts++;
        firstWrong ??= `viewer of ${runner.run.runId}: ${difference}`;
      }
    }),
    600_000,
    `${whole.length} runs finished after the storm`,
  );
  // A server that failed after the deploy is named with what it logged, not only the wait it broke.
  await finishing.catch((error: Error) => {
    throw new Error(`${error.message}${serverTrouble(servers, outputBefore)}`);
  });
  for (const { runner } of made) runner.close();

  return {
    servers: servers.length,
    runs,
    sockets: back.length,
    setupMs,
    setupRetries: [...setupAttempts.values()].reduce((sum, times) => sum + times.length, 0),
    goneMs,
    restartMs,
    dropSpreadMs: Math.max(0, ...lostAt) - dropAt,
    stormMs,
    reattachMs,
    runnerReattachMs,
    openMs,
    clientLoopDelayMs: { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
    peakPerSecond,
    samples,
    rssBeforeMB: rssBefore / 1e6,
    fdsBefore,
    drops: new Map([...drops].map(([kind, times]) => [kind, times.length])),
    attempts: byPhase(attempts, restartMs === null ? null : dropAt + restartMs),
    lostForGood,
    firstLoss,
    wrongTranscripts,
    firstWrong,
    unfinishedRuns: runs - whole.length,
    listenOverflows: listenAfter.overflows - listenBefore.overflows,
    loadBefore,
    loadAfter: load(),
  };
}

/** What each server logged as an error since the deploy (its first lines), and whether it still runs. */
function serverTrouble(servers: Target[], since: number[]): string {
  return servers
    .map((server, i) => {
      const lines = server
        .output()
        .slice(since[i])
        .split("\n")
        .filter((line) => /error|fatal|exception|failed|exited/i.test(line))
        .map((line) => line.slice(0, 400));
      if (lines.length === 0 && server.alive()) return "";
      return `\n${server.url}${server.alive() ? "" : " (exited)"}:\n  ${lines.slice(0, 5).join("\n  ")}`;
    })
    .join("");
}

/** Failed attempts by kind, split by whether they began before `backAt` (the last workerd answering again, as serve logged it). */
function byPhase(attempts: Failures, backAt: number | null): Map<string, number> {
  const split = new Map<string, number>();
  for (const [kind, times] of attempts) {
    for (const at of times) {
      const phase =
        backAt === null ? "" : at < backAt ? ", begun while workerd restarted" : ", begun after it answered again";
      split.set(`${kind}${phase}`, (split.get(`${kind}${phase}`) ?? 0) + 1);
    }
  }
  return split;
}
