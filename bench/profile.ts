/**
 * Where the time goes: a CPU profile of our worker under `npm run serve` (workerd's inspector,
 * V8's sampling profiler) while one bench workload runs, folded by source file and function
 * through the bundle's source map.
 *
 *   npm run bench:profile -- --workload ingest     (also: single, batched, catchup, viewers, runs)
 */
import { parseArgs } from "node:util";
import { freePort } from "../test/support/wrangler-dev.ts";
import { ALL_MEASUREMENTS } from "./measurements.ts";
import { type CpuProfile, printSummary, summarize } from "./profile-summary.ts";
import { startServe } from "./servers-ours.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { workload: { type: "string", default: "ingest" }, top: { type: "string", default: "25" } },
});
const measurement = ALL_MEASUREMENTS.find((m) => m.id === values.workload);
if (!measurement) throw new Error(`--workload: one of ${ALL_MEASUREMENTS.map((m) => m.id).join(", ")}`);

/** A minimal Chrome DevTools protocol client. */
async function connect(url: string) {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve());
    ws.addEventListener("error", () => reject(new Error(`inspector ${url} did not open`)));
  });
  let nextId = 0;
  const pending = new Map<number, (result: unknown) => void>();
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.error ? { error: message.error } : message.result);
  });
  const send = <T>(method: string, params: Record<string, unknown> = {}): Promise<T> => {
    nextId += 1;
    const id = nextId;
    ws.send(JSON.stringify({ id, method, params }));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector: no answer to ${method}`)), 60_000);
      pending.set(id, (result) => {
        clearTimeout(timer);
        resolve(result as T);
      });
    });
  };
  return { send, close: () => ws.close() };
}

const inspector = `127.0.0.1:${await freePort()}`;
const target = await startServe({ inspector });
try {
  const buildDir = /bundle and source map in (\S+)/.exec(target.output())?.[1] ?? null;
  const list = (await (await fetch(`http://${inspector}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const debuggerUrl = list[0]?.webSocketDebuggerUrl;
  if (!debuggerUrl) throw new Error(`no inspector target on ${inspector}`);
  const cdp = await connect(debuggerUrl);
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
