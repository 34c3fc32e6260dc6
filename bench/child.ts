/** Server processes the bench starts: own process group, captured output, bounded start and stop. */
import { type ChildProcess, spawn } from "node:child_process";
import { sleep } from "./sleep.ts";

export interface ServerProcess {
  pid: number;
  output(): string;
  exited(): boolean;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves when the group leader has exited. */
  stop(graceMs?: number): Promise<void>;
}

export function spawnServer(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): ServerProcess {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    detached: true, // its own process group, so stop() takes every descendant with it
    stdio: ["ignore", "pipe", "pipe"],
    env: options.env ?? process.env,
  });
  let output = "";
  let exited = false;
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  child.on("exit", () => (exited = true));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // already gone
    }
  };
  return {
    pid: child.pid as number,
    output: () => output,
    exited: () => exited,
    async stop(graceMs = 10_000) {
      if (!exited) {
        signal("SIGTERM");
        const deadline = Date.now() + graceMs;
        while (!exited && Date.now() < deadline) await sleep(50);
        if (!exited) signal("SIGKILL");
      }
    },
  };
}

/** Polls `url` until it answers (any status, or `status` if given); throws with the server's output otherwise. */
export async function waitUntilAnswering(
  url: string,
  server: ServerProcess,
  what: string,
  limitMs = 90_000,
  status?: number,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline && !server.exited()) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (status === undefined || res.status === status) return;
    } catch {
      // not up yet
    }
    await sleep(200);
  }
  const why = server.exited() ? "exited" : `did not answer within ${limitMs / 1000} s`;
  await server.stop();
  throw new Error(`${what} ${why} (${url}):\n${server.output().slice(-3000)}`);
}
