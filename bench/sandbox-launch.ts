/**
 * What the OS sandbox costs per launch (docs/SANDBOX.md): the same command started plainly, under
 * bwrap as `--sandbox os --network none` wraps it, and under `allow:` (bwrap plus the socat
 * forwarder, the supervisor's proxy already listening), turn by turn in one run.
 *
 *   node bench/sandbox-launch.ts [launches per variant, default 30]
 *
 * A benchmark, not a test: it prints a table of medians and ratios to the plain launch.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { wrapLaunch } from "../runner-bridge/src/sandbox/bwrap.ts";
import { requireSandboxTools } from "../runner-bridge/src/sandbox/check.ts";
import { planSandbox } from "../runner-bridge/src/sandbox/plan.ts";
import type { NetworkPolicy } from "../runner-bridge/src/sandbox/policy.ts";
import { startAllowProxy } from "../runner-bridge/src/sandbox/proxy.ts";
import type { SandboxSpec } from "../runner-bridge/src/sandbox/spec.ts";

const launches = Number(process.argv[2] ?? 30);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-bench-"));
const workspace = path.join(scratch, "workspace");
fs.mkdirSync(workspace);
const home = path.join(scratch, "home");
fs.mkdirSync(home);
const socket = path.join(scratch, "proxy.sock");
const proxy = await startAllowProxy(socket, ["localhost"]);

const runDir = path.join(scratch, "run");
fs.mkdirSync(runDir);

const TRUE = "/bin/true";

/** Only the namespaces, the read-only root and one mask over the run directory: the peer of the planned boundary. */
function bareSpec(network: NetworkPolicy): SandboxSpec {
  const tools = requireSandboxTools(network);
  return { ...tools, network, workspace, home, writable: [], hiddenRoots: [], hidden: [runDir] };
}

/** The boundary a run gets, as the bridge plans it: its own HOME with every credential path masked. */
function spec(network: NetworkPolicy): SandboxSpec {
  const ctx = {
    runId: "bench",
    runDir,
    adapter: "ndjson",
    agentEnv: { HOME: home },
    cwd: workspace,
    command: TRUE,
    args: [],
  };
  return planSandbox({ mode: "os", network }, { ...ctx, edge: "http://127.0.0.1:8787" }) as SandboxSpec;
}

const variants: { name: string; argv: () => [string, string[]] }[] = [
  { name: "plain spawn", argv: () => [TRUE, []] },
  {
    name: "bwrap, the run directory masked only",
    argv: () => {
      const w = wrapLaunch(bareSpec({ kind: "none" }), TRUE, [], {}, null);
      return [w.command, w.args];
    },
  },
  {
    name: "--sandbox os --network none",
    argv: () => {
      const w = wrapLaunch(spec({ kind: "none" }), TRUE, [], {}, null);
      return [w.command, w.args];
    },
  },
  {
    name: "--sandbox os --network allow:",
    argv: () => {
      const w = wrapLaunch(spec({ kind: "allow", domains: ["localhost"] }), TRUE, [], {}, socket);
      return [w.command, w.args];
    },
  },
];

function once(command: string, args: string[]): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: "ignore", env: { PATH: process.env.PATH ?? "" } });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(performance.now() - start) : reject(new Error(`${command} exited ${code}`)),
    );
  });
}

const samples = new Map(variants.map((v) => [v.name, [] as number[]]));
for (let i = 0; i < launches; i++) {
  for (const v of variants) {
    const [command, args] = v.argv();
    samples.get(v.name)?.push(await once(command, args));
  }
}
proxy.close();
fs.rmSync(scratch, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const base = median(samples.get("plain spawn") ?? []);
console.log(
  `sandbox launch cost, ${launches} launches each of ${TRUE}, ${os.cpus().length} cores, bwrap at ${requireSandboxTools({ kind: "none" }).bwrap}`,
);
console.log("| launch | median ms | × plain |");
console.log("| --- | ---: | ---: |");
for (const v of variants) {
  const m = median(samples.get(v.name) ?? []);
  console.log(`| ${v.name} | ${m.toFixed(1)} | ${(m / base).toFixed(1)} |`);
}
