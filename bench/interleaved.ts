/**
 * One change against the code before it, request by request: `npm run serve` of this checkout
 * and of another commit (a temporary worktree, as `--baseline`), the same requests sent to each
 * in turn (ABBA order), medians of the time each took. On a machine whose speed moves by 2× within
 * minutes, this resolves a few percent where whole bench rounds cannot.
 *
 *   npm run bench:interleaved -- --workload single --baseline HEAD   (also: batched, catchup)
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { checkOutBaseline } from "./baseline.ts";
import { appendJson, call, createJsonStream, streamUrl } from "./client.ts";
import { fillCatchUpStream } from "./measure-catch-up.ts";
import { agentEvent } from "./payloads.ts";
import { startServe } from "./servers-ours.ts";
import { median } from "./stats.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    workload: { type: "string", default: "single" },
    baseline: { type: "string", default: "HEAD" },
    requests: { type: "string", default: "400" },
  },
});
const workload = values.workload as string;
if (!["single", "batched", "catchup"].includes(workload)) throw new Error("--workload: single, batched or catchup");
const requests = Number(values.requests);

const baseline = checkOutBaseline(values.baseline as string);
const targets = [await startServe(), await startServe({ baseline })];
try {
  const urls: string[] = [];
  for (const target of targets) {
    const url = streamUrl(target, workload);
    if (workload === "catchup") await fillCatchUpStream(url);
    else await createJsonStream(url);
    urls.push(url);
  }
  const times: number[][] = [[], []];
  for (let i = 0; i < requests * 2; i++) {
    const which = (i % 2) ^ ((i >> 1) % 2);
    const start = performance.now();
    if (workload === "catchup") await (await call("GET", `${urls[which]}?offset=-1`, { expect: [200] })).arrayBuffer();
    else {
      const n = workload === "single" ? 1 : 100;
      await appendJson(
        urls[which] as string,
        JSON.stringify(Array.from({ length: n }, (_, k) => agentEvent(i * n + k))),
      );
    }
    // The first 10 of each warm the JIT and the objects.
    if (i >= 20) times[which]?.push(performance.now() - start);
  }
  const [ours, base] = times.map((list) => median(list)) as [number, number];
  console.log(`| ${workload} | this checkout | ${baseline.commit} | this ÷ base |`);
  console.log("| --- | ---: | ---: | ---: |");
  console.log(`| median ms per request | ${ours.toFixed(3)} | ${base.toFixed(3)} | ${(ours / base).toFixed(3)}× |`);
} finally {
  await Promise.allSettled(targets.map((target) => target.stop()));
  baseline.remove();
}
