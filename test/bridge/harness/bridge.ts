import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { processAlive } from "../../../runner-bridge/src/proctree.ts";
import { REPO } from "./edge.ts";
import { waitFor } from "../../support/wait.ts";

export const BRIDGE_BIN = path.join(REPO, "runner-bridge/bin/runner-bridge.mjs");
export const FIXTURES = path.join(REPO, "test/bridge/fixtures");
export const NODE = process.execPath;

export interface BridgeProcess {
  child: ChildProcess;
  pid: number;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  exitCode: () => number | null | undefined;
  /** Waits (bounded) for the exit and returns its code. */
  waitExit(timeoutMs?: number): Promise<number | null>;
  kill9(): Promise<void>;
}

/**
 * BRIDGE_SANDBOX=os (the bridge-sandboxed project) runs every `run` and `resume` of a test file
 * under `--sandbox os`, its workspace the bridge's cwd. The sandbox has a private /tmp, so the
 * tests' own files (scripts, markers, homes) live under /var/tmp instead: read-only inside but
 * for the workspace and HOME.
 */
export const SANDBOXED = process.env.BRIDGE_SANDBOX === "os";
const TEMP_ROOT = SANDBOXED ? fs.mkdtempSync("/var/tmp/bridge-sandboxed-") : os.tmpdir();

/** /var/tmp outlives reboots: the sandboxed run's files go after the test file (useEdge calls this). */
export function removeSandboxedFiles(): void {
  if (SANDBOXED) fs.rmSync(TEMP_ROOT, { recursive: true, force: true });
}

/**
 * The HOME bridges (and so their agents) get unless a test gives one: the fixture agents keep
 * their session files under it as the real CLIs do, never under the real home directory.
 */
const AGENT_HOME = fs.mkdtempSync(path.join(TEMP_ROOT, "agent-home-"));

/**
 * The HOME the agent of the run in `dir` has: the bridge's, or when SANDBOXED the run's own
 * `<dir>.home` (the default of `--sandbox os`, which never lends the agent the bridge's HOME).
 */
export function agentHomeOf(bridgeHome: string, dir: string): string {
  return SANDBOXED ? `${dir}.home` : bridgeHome;
}

/** `run`/`resume` with `--sandbox os` added when SANDBOXED (a test that chose a sandbox keeps its own). */
function maybeSandboxed(args: string[], cwd: string): string[] {
  if (!SANDBOXED || (args[0] !== "run" && args[0] !== "resume") || args.includes("--sandbox")) return args;
  const [command, ...rest] = args as [string, ...string[]];
  return [command, "--sandbox", "os", "--workspace", cwd, ...rest];
}

/** Starts `runner-bridge <args>` as a real process. */
export function startBridge(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; bin?: string } = {},
): BridgeProcess {
  const cwd = options.cwd ?? (SANDBOXED ? TEMP_ROOT : REPO);
  const child = spawn(NODE, [options.bin ?? BRIDGE_BIN, ...maybeSandboxed(args, cwd)], {
    cwd,
    env: { ...process.env, HOME: AGENT_HOME, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (err += d));
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.on("exit", (c) => {
      code = c;
      resolve(c);
    });
  });
  const proc: BridgeProcess = {
    child,
    pid: child.pid as number,
    stdout: () => out,
    stderr: () => err,
    exited,
    exitCode: () => code,
    async waitExit(timeoutMs = 30_000) {
      await waitFor(
        `bridge ${args[0]} (pid ${child.pid}) to exit; stderr so far: ${err.slice(-1500)}`,
        () => code !== undefined,
        timeoutMs,
      );
      return code as number | null;
    },
    async kill9() {
      child.kill("SIGKILL");
      await waitFor(`bridge pid ${child.pid} to die of SIGKILL`, () => code !== undefined, 10_000);
    },
  };
  return proc;
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(TEMP_ROOT, prefix));
}

/** Flags every test bridge shares: where to connect, and short backoff and grace periods. */
function commonArgs(o: { edge: string; runId: string; token: string; dir: string }): string[] {
  return [
    ["--edge", o.edge],
    ["--run", o.runId],
    ["--token", o.token],
    ["--dir", o.dir],
    ["--reconnect-min-ms", "50"],
    ["--reconnect-max-ms", "500"],
    ["--grace-ms", "1500"],
  ].flat();
}

/** What a bridge command line names: the edge, the run, its token, the run directory and the agent. */
export interface BridgeArgs {
  edge: string;
  runId: string;
  token: string;
  dir: string;
  extra?: string[];
  agent: string[];
}

/** The usual `run` argument list. */
export function runArgs(o: BridgeArgs): string[] {
  return ["run", ...commonArgs(o), ...(o.extra ?? []), "--", ...o.agent];
}

/** `runner-bridge resume` on a fresh sandbox: the run's checkpoint restored, the next generation started. */
export function resumeArgs(o: BridgeArgs): string[] {
  return ["resume", ...commonArgs(o), ...(o.extra ?? []), "--", ...o.agent];
}

export function attachArgs(o: { edge: string; runId: string; token: string; dir: string; extra?: string[] }): string[] {
  return ["attach", ...commonArgs(o), ...(o.extra ?? [])];
}

/** True while a process exists and is not a zombie. */
export const alive = processAlive;

/** The journal lines the agent produced, minus the supervisor's sentinel. */
export function journalLines(dir: string): string[] {
  const text = fs.readFileSync(path.join(dir, "journal.ndjson"), "utf8");
  return text
    .split("\n")
    .filter((l, i, all) => !(i === all.length - 1 && l === "") && !l.startsWith('{"__runnerBridgeExit"'));
}
