/**
 * Side-by-side benchmark: this worker under `npm run serve` (the production bundle on plain
 * workerd) and under `wrangler dev`, against the reference Durable Streams server
 * (`@durable-streams/server`, Node) with its file store and its memory store; one client, the
 * same code for every target, one run. See docs/BENCHMARKS.md.
 *
 *   npm run bench                                   everything (rounds: BENCH_ROUNDS or 5)
 *   npm run bench -- --only ingest,viewers --quick  a subset, one round
 *   npm run bench -- --help
 *
 * Every measurement runs a warm-up pass on each target, then the rounds; within a round the
 * targets take turns, the order rotating from round to round so machine noise lands on all of
 * them. Cells are medians over rounds. The cost-model counts come from a separate metered
 * `npm run serve --meter`, after the rounds. Every loop is bounded by a count and a time limit,
 * everything is on loopback, and everything started here is stopped before exit. A benchmark,
 * not a test: nothing about timing is asserted; a server answering an unexpected status stops it.
 */
import os from "node:os";
import { printCost } from "./cost-model.ts";
import { measureCounts } from "./measure-counts.ts";
import { measureLinger, printLinger } from "./measure-linger.ts";
import { measureStorm, planStorm } from "./measure-storm.ts";
import { measureList, printList } from "./measure-list.ts";
import { measurePools, printPools } from "./measure-pools.ts";
import { ALL_MEASUREMENTS } from "./measurements.ts";
import { parseBenchOptions, USAGE } from "./options.ts";
import { checkOutBaseline } from "./baseline.ts";
import { machine, printCounts, printServerErrors, printTable } from "./report.ts";
import { runRounds } from "./rounds.ts";
import { printStorm } from "./storm-report.ts";
import { startDev, startServe } from "./servers-ours.ts";
import { startReference, type Target } from "./targets.ts";

const OVERALL_LIMIT_MS = 60 * 60_000;

const parsed = parseBenchOptions(process.argv.slice(2));
if (parsed === "help") {
  console.log(USAGE);
  process.exit(0);
}
const options = parsed;

// Everything started is registered here, so every way out (end, error, Ctrl-C, time limit) stops it.
const targets: Target[] = [];
let stopping: Promise<void> | null = null;
/** Run after the targets stop (a baseline's worktree). */
const cleanups: (() => void)[] = [];
function stopAll(): Promise<void> {
  stopping ??= Promise.allSettled(targets.map((t) => t.stop())).then(() => {
    for (const cleanup of cleanups) cleanup();
  });
  return stopping;
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping servers`);
    void stopAll().then(() => process.exit(130));
  });
}
const overall = setTimeout(() => {
  console.error(`benchmark exceeded ${OVERALL_LIMIT_MS / 60_000} min; stopping servers`);
  void stopAll().then(() => process.exit(2));
}, OVERALL_LIMIT_MS);

const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

async function start(name: string, starter: () => Promise<Target>): Promise<void> {
  // One retry: other jobs on the machine start servers too (wrangler dev can race for a port).
  const target = await starter().catch(() => starter());
  targets.push(target);
  console.log(
    `  ${name.padEnd(11)} ${target.url}  (${target.label}${target.floor ? `; floor: ${target.floor.url}` : ""})`,
  );
}

async function main(): Promise<void> {
  for (const line of machine(options.rounds)) console.log(line);
  const measurements = ALL_MEASUREMENTS.filter((m) => options.only.has(m.id));
  console.log(`measurements: ${[...options.only].join(", ")}; targets: ${[...options.targets].join(", ")}`);
  console.log("\nstarting servers…");
  // One at a time: two wrangler devs started together can race for the same internal port.
  if (measurements.length > 0) {
    if (options.targets.has("ref-file")) await start("ref-file", () => startReference("file"));
    if (options.targets.has("ref-mem")) await start("ref-mem", () => startReference("memory"));
    if (options.targets.has("serve")) await start("serve", () => startServe());
    if (options.baseline) {
      const baseline = checkOutBaseline(options.baseline);
      cleanups.push(baseline.remove);
      await start("base", () => startServe({ baseline }));
    }
    if (options.targets.has("dev")) await start("dev", startDev);
    const results = await runRounds(measurements, [...targets], options.rounds);
    printTable(measurements, results, options.rounds);
  }
  if (options.only.has("counts")) {
    await start("serve-meter", () => startServe({ meter: true }));
    const metered = targets.at(-1) as Target;
    const counts = await measureCounts(metered);
    printCounts(counts);
    printCost(counts);
  }
  if (options.only.has("pools")) {
    await start("serve-pools", () => startServe());
    printPools(await measurePools(targets.at(-1) as Target));
  }
  if (options.only.has("list")) printList(await measureList());
  if (options.only.has("linger")) {
    // The real runner-bridge against serve only: what its --linger-ms costs a viewer.
    await start("serve-linger", () => startServe());
    printLinger(await measureLinger(targets.at(-1) as Target, options.rounds));
  }
  if (options.only.has("storm")) {
    // Before serve starts, so that its workerd inherits the open-files limit (bench/measure-storm.ts).
    const plan = planStorm(options.stormSockets);
    console.log(`  storm: ${plan.note}`);
    const servers: Target[] = [];
    for (let i = 0; i < plan.servers; i++) {
      await start(`serve-storm${plan.servers > 1 ? `-${i + 1}` : ""}`, () => startServe());
      servers.push(targets.at(-1) as Target);
    }
    printStorm(await measureStorm(servers, options.stormSockets));
  }
  console.log(`\nload average at end: ${loadAverage()}`);
  printServerErrors(targets);
}

try {
  await main();
} catch (err) {
  console.error(`\nbenchmark failed: ${err instanceof Error ? err.message : String(err)}`);
  for (const t of targets) {
    const log = t.output().trim();
    const state = t.alive() ? "running" : "its process had exited";
    if (log) console.error(`\n${t.name} (${t.url}, ${state}) output, last 3000 chars:\n${log.slice(-3000)}`);
  }
  process.exitCode = 1;
} finally {
  clearTimeout(overall);
  await stopAll();
}
