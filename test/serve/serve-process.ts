/**
 * A real `npm run serve` on a free loopback port, in its own process group. `stop()` signals the
 * group the way a terminal's Ctrl-C or a container runtime does, then waits, bounded, for the
 * server's own "stopped" line and for every process of the group to be gone.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { freePort, REPO } from "../support/wrangler-dev.ts";
import { waitFor } from "../support/wait.ts";

export interface ServeProcess {
  url: string;
  output(): string;
  /** Signals the process group and resolves once it is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves with the npm process's exit (for a server that refuses to start). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ServeStart {
  dataDir: string;
  args?: string[];
  /** Replaces the inherited secrets; the rest of the environment is inherited. */
  env?: Record<string, string>;
  /** Don't wait for the server to answer (for refusals). */
  noWait?: boolean;
}

export const SERVE_API_KEY = "serve-test-key";
export const SERVE_SECRETS = {
  API_KEYS: `${SERVE_API_KEY}=serve-tenant`,
  TOKEN_SECRET: "serve-test-secret-0123456789",
};

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startServe(start: ServeStart, readyMs = 90_000): Promise<ServeProcess> {
  const port = await freePort();
  const args = ["run", "serve", "--", "--port", String(port), "--data", start.dataDir, ...(start.args ?? [])];
  const env: NodeJS.ProcessEnv = { ...process.env, API_KEYS: undefined, TOKEN_SECRET: undefined, ...start.env };
  const child: ChildProcess = spawn("npm", args, { cwd: REPO, detached: true, stdio: ["ignore", "pipe", "pipe"], env });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const pid = child.pid as number;
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (!groupAlive(pid)) return;
    try {
      process.kill(-pid, signal);
    } catch {
      return;
    }
    try {
      // serve's own bounds: its pool host gets 10 s (serve/dev-pool.ts), then workerd 10 s more before
      // SIGKILL (serve/main.ts); a wait shorter than both fails a shutdown that keeps to them.
      await waitFor(`npm run serve (group ${pid}) to exit after ${signal}`, () => !groupAlive(pid), 30_000, 50);
    } catch (error) {
      process.kill(-pid, "SIGKILL");
      throw error;
    }
  };
  const url = `http://127.0.0.1:${port}`;
  if (!start.noWait) {
    try {
      // Ends early, with the reason, if the server exits instead.
      const outcome = await waitFor(
        `npm run serve to print "serving ${url}"`,
        () =>
          output.includes(`serving ${url}`) ? "ready" : child.exitCode !== null ? `exited ${child.exitCode}` : null,
        readyMs,
        100,
      );
      if (outcome !== "ready") throw new Error(`npm run serve ${outcome} before serving ${url}`);
    } catch (error) {
      await stop("SIGKILL").catch(() => undefined);
      throw new Error(`${(error as Error).message}\nnpm run serve output:\n${output.slice(-3000)}`);
    }
  }
  return { url, output: () => output, stop, exited };
}
