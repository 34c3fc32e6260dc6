import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { expect } from "vitest";
import { waitFor } from "../../support/wait.ts";
import { REPO } from "../../support/wrangler-dev.ts";

export const CLI_BIN = path.join(REPO, "agent-run/bin/agent-run.mjs");
export const KEY = "dev-key-alpha";
/** Local times in the transcript are the same in the CLI and in the expectations. */
export const TZ = "UTC";
process.env.TZ = TZ;

/** Every process a test started, so none outlives its test (see useEdge). */
const live = new Set<{ kill(): void }>();

export function killLeftovers(): void {
  for (const proc of live) proc.kill();
  live.clear();
}

export function track<T extends { kill(): void }>(proc: T): T {
  live.add(proc);
  return proc;
}

export interface CliOptions {
  /** The API key; null runs without one (no --key, no AGENT_RUN_KEY). */
  key?: string | null;
  env?: Record<string, string>;
  stdin?: string;
  cwd?: string;
}

/** The environment of a CLI process: only what the test says, never the developer's AGENT_RUN_*. */
export function cliEnv(url: string, options: CliOptions = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NO_COLOR;
  Object.assign(env, { TZ, AGENT_RUN_URL: url }, options.env);
  const key = options.key === undefined ? KEY : options.key;
  if (key === null) delete env.AGENT_RUN_KEY;
  else env.AGENT_RUN_KEY = key;
  return env;
}

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Waits (bounded) until stdout satisfies the predicate. */
  waitForStdout(description: string, predicate: (stdout: string) => boolean, timeoutMs?: number): Promise<void>;
  waitExit(timeoutMs?: number): Promise<number | null>;
  kill(): void;
}

/** `agent-run ARGS` as a real process (stdout a pipe, so not a TTY). */
export function startCli(url: string, args: string[], options: CliOptions = {}): CliProcess {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: options.cwd ?? REPO,
    env: cliEnv(url, options),
    stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (err += d));
  let code: number | null | undefined;
  child.on("exit", (c) => (code = c));
  return track({
    child,
    stdout: () => out,
    stderr: () => err,
    async waitForStdout(description, predicate, timeoutMs = 30_000) {
      await waitFor(
        `agent-run ${args[0]} to print ${description}; stderr: ${err.slice(-500)}`,
        () => predicate(out),
        timeoutMs,
      );
    },
    async waitExit(timeoutMs = 60_000) {
      await waitFor(
        `agent-run ${args.join(" ")} to exit; stdout: ${out.slice(-800)} stderr: ${err.slice(-800)}`,
        () => code !== undefined,
        timeoutMs,
      );
      return code as number | null;
    },
    kill: () => child.kill("SIGKILL"),
  });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `agent-run ARGS` to its end. */
export async function cli(url: string, args: string[], options: CliOptions = {}): Promise<CliResult> {
  const proc = startCli(url, args, options);
  const code = await proc.waitExit();
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

/** The non-empty lines of a text. */
export function lines(text: string): string[] {
  return text.split("\n").filter((l) => l !== "");
}

/** NDJSON parsed line by line; a line that is not one JSON value fails the test naming it. */
export function ndjson<T = Record<string, unknown>>(text: string): T[] {
  return lines(text).map((line, i) => {
    try {
      return JSON.parse(line) as T;
    } catch {
      throw new Error(`line ${i + 1} of the --json output is not JSON: ${line}`);
    }
  });
}

/** The one-line error shape every HTTP or socket error takes. */
export const ERROR_LINE = /^agent-run: [a-z_0-9]+: [^\n]+\n$/;

/** Waits for the exit and checks its status; a mismatch shows what the process said on stderr. */
export async function expectExit(proc: { waitExit(): Promise<number | null>; stderr(): string }, code: number) {
  const exit = await proc.waitExit();
  expect({ exit, stderr: proc.stderr() }).toMatchObject({ exit: code });
}
