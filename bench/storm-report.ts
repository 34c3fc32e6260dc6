/** The storm's table (bench/measure-storm.ts): what `npm run bench -- --only storm` prints. */
import { EVENTS_BEFORE, SAMPLE_MS, type Sample, type StormReport, VIEWERS_PER_RUN } from "./measure-storm.ts";
import { percentile } from "./stats.ts";

export function printStorm(report: StormReport): void {
  const n = (value: number, digits = 0) => value.toLocaleString("en-US", { maximumFractionDigits: digits });
  const s = (ms: number) => `${n(ms / 1000, 2)} s`;
  const cores = (pick: (sample: Sample) => number) => {
    const spans = report.samples.slice(1).map((b, i) => pick(b) / Math.max(1, b.at - (report.samples[i] as Sample).at));
    const total = report.samples.slice(1).reduce((sum, b) => sum + pick(b), 0);
    const span = (report.samples.at(-1) as Sample).at - (report.samples[0] as Sample).at;
    return `${n(total / Math.max(1, span), 2)} / ${n(Math.max(0, ...spans), 2)} cores`;
  };
  console.log(
    `\nreconnect storm (${report.servers === 1 ? "npm run serve" : `${report.servers} × npm run serve, runs spread evenly`}): ${n(report.runs)} runs × (1 runner + ${VIEWERS_PER_RUN} viewers) = ${n(report.sockets)} sockets; deploy = workerd killed and restarted on the same data; every client reconnects by itself, first at once, then with its backoff\n`,
  );
  console.log("| measurement | value |");
  console.log("| --- | ---: |");
  console.log(
    `| setup (create, claim, ${EVENTS_BEFORE} events, viewers attached) | ${s(report.setupMs)} (${n(report.setupRetries)} retried attempts) |`,
  );
  const logged = (ms: number | null) => (ms === null ? "not logged" : s(ms));
  console.log(
    `| deploy (SIGUSR2) to the old workerd gone / to the new one answering | ${logged(report.goneMs)} / ${logged(report.restartMs)} |`,
  );
  console.log(`| deploy to the last socket seen dropped | ${s(report.dropSpreadMs)} |`);
  console.log(`| **storm: deploy to every runner claimed and every viewer live again** | **${s(report.stormMs)}** |`);
  console.log(
    `| time to reattach (deploy to claimed or live again), p50 / p99 / max | ${s(percentile(report.reattachMs, 50))} / ${s(percentile(report.reattachMs, 99))} / ${s(Math.max(0, ...report.reattachMs))} |`,
  );
  console.log(
    `| deploy to the upgrade answered (101), p50 / p99 | ${s(percentile(report.openMs, 50))} / ${s(percentile(report.openMs, 99))} |`,
  );
  console.log(
    `| the same, runners only (claimed again), p50 / p99 | ${s(percentile(report.runnerReattachMs, 50))} / ${s(percentile(report.runnerReattachMs, 99))} |`,
  );
  console.log(
    `| sockets re-established per second, mean / peak ${SAMPLE_MS} ms | ${n((report.reattachMs.length * 1000) / Math.max(1, report.stormMs))} / ${n(report.peakPerSecond)} |`,
  );
  console.log(
    `| server (workerd) CPU during the storm, mean / peak ${SAMPLE_MS} ms | ${cores((x) => x.serverCpuMs)} |`,
  );
  console.log(`| clients (the bench process) CPU, mean / peak ${SAMPLE_MS} ms | ${cores((x) => x.clientCpuMs)} |`);
  console.log(
    `| clients' event-loop delay during the storm, p99 / max | ${n(report.clientLoopDelayMs.p99)} / ${n(report.clientLoopDelayMs.max)} ms |`,
  );
  const waited = (pick: (sample: Sample) => number, processes: number) =>
    `${n((100 * report.samples.reduce((sum, x) => sum + pick(x), 0)) / Math.max(1, report.stormMs * processes))} %`;
  console.log(
    `| share of the storm runnable but waiting for a CPU (the machine's load), each workerd / clients | ${waited((x) => x.serverWaitMs, report.servers)} / ${waited((x) => x.clientWaitMs, 1)} |`,
  );
  console.log(
    `| server memory (workerd RSS) before the deploy / peak after it | ${n(report.rssBeforeMB)} / ${n(Math.max(...report.samples.slice(1).map((x) => x.serverRss)) / 1e6)} MB |`,
  );
  const fds = report.fdsBefore.reduce((a, b) => a + b, 0);
  console.log(
    `| workerd open descriptors before the deploy (per socket) | ${report.fdsBefore.map((x) => n(x)).join(" + ")} (${n(fds / report.sockets, 2)}) |`,
  );
  const retried = [...report.attempts.values()].reduce((a, b) => a + b, 0);
  console.log(`| failed attempts during the storm (each retried) | ${n(retried)} |`);
  console.log(`| listen-queue overflows (kernel, system-wide) | ${n(report.listenOverflows)} |`);
  console.log(
    `| sockets that never came back (runs left unfinished) | ${n(report.lostForGood)} (${n(report.unfinishedRuns)}) |`,
  );
  console.log(`| viewers whose transcript was not the run's log exactly | ${n(report.wrongTranscripts)} |`);
  console.log(`| load average before / after | ${report.loadBefore} / ${report.loadAfter} |`);
  const kinds = (title: string, tally: Map<string, number>) => {
    if (tally.size > 0) console.log(`\n${title}:`);
    for (const [kind, times] of [...tally].sort((a, b) => b[1] - a[1])) console.log(`  ${n(times)} × ${kind}`);
  };
  kinds("how the sockets dropped", report.drops);
  kinds("failed attempts during the storm", report.attempts);
  if (report.firstLoss) console.log(`\nfirst socket lost for good: ${report.firstLoss}`);
  if (report.firstWrong) console.log(`\nfirst wrong transcript: ${report.firstWrong}`);
}
