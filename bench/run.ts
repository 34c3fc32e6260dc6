/**
 * Side-by-side benchmark: this worker (a real `wrangler dev`, local workerd + SQLite Durable
 * Objects) against the reference Durable Streams server (`@durable-streams/server`, Node), with
 * one client and the same code for every target.
 *
 *   npm run bench                         (from the repo root)
 *   BENCH_ROUNDS=9 npm run bench          more rounds (default 5)
 *
 * Targets: `ours`; `ref-file` — the reference with its file-backed store (segment files with an
 * fdatasync per append, LMDB metadata: durable, like SQLite); `ref-mem` — the reference's
 * in-memory store (not durable; an upper bound). Every measurement runs a warm-up pass on each
 * target, then `BENCH_ROUNDS` rounds; within a round the targets take turns, and the order
 * rotates from round to round so machine noise lands on all of them. Rows report the median
 * over rounds. Every loop is bounded by a count and a time limit, everything is on loopback,
 * and everything started here is stopped before exit.
 *
 * This is a benchmark, not a test: it asserts nothing about timing. It does fail loudly (with
 * the exact request and response) if a server answers with an unexpected status.
 */
import os from "node:os";
import { allMeasurements } from "./measurements.ts";
import { machine, printServerErrors, printTable } from "./report.ts";
import { runRounds } from "./rounds.ts";
import { type FloorWorker, startFloorWorker, startOurs, startReference, type Target } from "./targets.ts";

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5) || 5);
const OVERALL_LIMIT_MS = 25 * 60_000;

// Everything started is registered here, so every way out (end, error, Ctrl-C, time limit) stops it.
const targets: Target[] = [];
let floorWorker: FloorWorker | null = null;
let stopping: Promise<void> | null = null;
function stopAll(): Promise<void> {
  stopping ??= Promise.allSettled([...targets.map((t) => t.stop()), ...(floorWorker ? [floorWorker.stop()] : [])]).then(
    () => undefined,
  );
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

const MEASUREMENTS = allMeasurements(() => floorWorker);

async function main(): Promise<void> {
  const info = machine(ROUNDS);
  for (const line of info) console.log(line);
  console.log("\nstarting servers…");
  // The two `wrangler dev`s start one after the other: started together they can race for the
  // same internal port ("Address already in use (socket direct:1:default)"). Each gets one retry,
  // since other jobs on the machine start wrangler dev too.
  const retryOnce = <T>(start: () => Promise<T>) => start().catch(() => start());
  const references = Promise.allSettled([startReference("file"), startReference("memory")]);
  const ours = await Promise.allSettled([retryOnce(startOurs)]);
  const floor = await Promise.allSettled([retryOnce(startFloorWorker)]);
  const started = [...ours, ...(await references)];
  if (floor[0]?.status === "fulfilled") floorWorker = floor[0].value;
  for (const s of started) if (s.status === "fulfilled") targets.push(s.value);
  for (const s of [...floor, ...started]) if (s.status === "rejected") throw s.reason;
  for (const t of targets) console.log(`  ${t.name.padEnd(8)} ${t.url}  (${t.label})`);
  console.log(`  floor    ${floorWorker?.url}  (bench/floor-worker.ts under wrangler dev)`);

  const results = await runRounds(MEASUREMENTS, targets, ROUNDS);
  printTable(MEASUREMENTS, results, ROUNDS);
  console.log(
    `\nload average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  printServerErrors(targets);
}

try {
  await main();
} catch (err) {
  console.error(`\nbenchmark failed: ${err instanceof Error ? err.message : String(err)}`);
  for (const t of targets) {
    const log = t.output().trim();
    if (log) console.error(`\n${t.name} (${t.url}) output, last 3000 chars:\n${log.slice(-3000)}`);
  }
  process.exitCode = 1;
} finally {
  clearTimeout(overall);
  await stopAll();
}
