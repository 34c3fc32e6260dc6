/**
 * Where a reconnect storm's server time goes: a CPU profile of the restarted workerd (its
 * inspector, V8's sampling profiler) from just after the deploy until every socket is back,
 * folded by source file and function through the bundle's source map. One `npm run serve`.
 *
 *   npx node bench/storm-profile.ts [--sockets 5000] [--top 25]
 */
import { parseArgs } from "node:util";
import { freePort } from "../test/support/wrangler-dev.ts";
import { connectInspector } from "./inspector.ts";
import { measureStorm } from "./measure-storm.ts";
import { type CpuProfile, printSummary, summarize } from "./profile-summary.ts";
import { startServe } from "./servers-ours.ts";
import { sleep } from "./sleep.ts";
import { printStorm } from "./storm-report.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { sockets: { type: "string", default: "5000" }, top: { type: "string", default: "25" } },
});
const inspector = `127.0.0.1:${await freePort()}`;
const target = await startServe({ inspector });
try {
  const buildDir = /bundle and source map in (\S+)/.exec(target.output())?.[1] ?? null;
  let profiling: Promise<{ stop(): Promise<CpuProfile> }> | null = null;
  // The restarted workerd opens its inspector again on the same address: attach as soon as it does.
  const attach = async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const list = (await (await fetch(`http://${inspector}/json/list`)).json()) as {
          webSocketDebuggerUrl: string;
        }[];
        const url = list[0]?.webSocketDebuggerUrl;
        if (url && target.output().includes("restarted in")) {
          const cdp = await connectInspector(url);
          await cdp.send("Profiler.enable");
          await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
          await cdp.send("Profiler.start");
          return {
            async stop() {
              const { profile } = await cdp.send<{ profile: CpuProfile }>("Profiler.stop");
              cdp.close();
              return profile;
            },
          };
        }
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error(`the restarted workerd's inspector on ${inspector} never answered`);
      await sleep(20);
    }
  };
  let profile: CpuProfile | null = null;
  const report = await measureStorm([target], Number(values.sockets), {
    deployed: () => {
      profiling = attach();
    },
    back: async () => {
      profile = await (await (profiling as unknown as Promise<{ stop(): Promise<CpuProfile> }>)).stop();
    },
  });
  printStorm(report);
  printSummary(
    "CPU profile of the restarted workerd, from its inspector attaching to every socket back",
    summarize(profile as unknown as CpuProfile, buildDir),
    Number(values.top),
  );
} finally {
  await target.stop();
}
