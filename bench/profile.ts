/**
 * Where the time goes: a CPU profile of our worker under `npm run serve` (workerd's inspector,
 * V8's sampling profiler) while one bench workload runs, folded by source file and function
 * through the bundle's source map.
 *
 *   npm run bench:profile -- --workload ingest     (also: single, batched, catchup, viewers, runs)
 */
import { parseArgs } from "node:util";
import { freePort } from "../test/support/wrangler-dev.ts";
import { connectInspector } from "./inspector.ts";
import { ALL_MEASUREMENTS } from "./measurements.ts";
import { type CpuProfile, printSummary, summarize } from "./profile-summary.ts";
import { startServe } from "./servers-ours.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { workload: { type: "string", default: "ingest" }, top: { type: "string", default: "25" } },
});
const measurement = ALL_MEASUREMENTS.find((m) => m.id === values.workload);
if (!measurement) throw new Error(`--workload: one of ${ALL_MEASUREMENTS.map((m) => m.id).join(", ")}`);

const inspector = `127.0.0.1:${await freePort()}`;
const target = await startServe({ inspector });
try {
  const buildDir = /bundle and source map in (\S+)/.exec(target.output())?.[1] ?? null;
  const list = (await (await fetch(`http://${inspector}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const debuggerUrl = list[0]?.webSocketDebuggerUrl;
  if (!debuggerUrl) throw new Error(`no inspector target on ${inspector}`);
  const cdp = await connectInspector(debuggerUrl);
  await measurement.run(target, 0.1); // warm-up: JIT, first objects
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const result = await measurement.run(target, 1);
  const { profile } = await cdp.send<{ profile: CpuProfile }>("Profiler.stop");
  cdp.close();
  console.log(`workload ${measurement.id}: ${JSON.stringify(result)}`);
  printSummary(
    `CPU profile of the worker (workerd), ${measurement.title}`,
    summarize(profile, buildDir),
    Number(values.top),
  );
} finally {
  await target.stop();
}
