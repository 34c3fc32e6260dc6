import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { waitFor } from "./wait.ts";

export const REPO = path.resolve(import.meta.dirname, "../..");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export interface DevServer {
  url: string;
  port: number;
  output(): string;
  /** kill -9 of the whole wrangler/workerd process group; its state on disk stays. */
  crash(): Promise<void>;
  /** Starts it again on the same port and the same state, bounded like the first start. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real `wrangler dev` (as `npm start` runs it) on a free loopback port with throwaway state.
 * `vars` become `--var name:value`. Bounded: it must answer within `readyMs` or it is killed and
 * the error carries its output.
 */
export async function startWranglerDev(vars: Record<string, string> = {}, readyMs = 90_000): Promise<DevServer> {
  const port = await freePort();
  const persist = fs.mkdtempSync(path.join(os.tmpdir(), "wrangler-state-"));
  const url = `http://127.0.0.1:${port}`;
  let current = await launch({ port, persist, vars, readyMs });
  const removeState = () => fs.rmSync(persist, { recursive: true, force: true });
  return {
    url,
    port,
    output: () => current.output(),
    crash: () => current.kill("SIGKILL"),
    async restart() {
      await current.kill("SIGKILL");
      current = await launch({ port, persist, vars, readyMs });
    },
    async stop() {
      await current.kill("SIGTERM");
      removeState();
    },
  };
}

interface Process {
  output(): string;
  /** Signals the process group and waits (bounded) for it to exit; SIGKILL if SIGTERM is ignored. */
  kill(signal: "SIGTERM" | "SIGKILL"): Promise<void>;
}

type LaunchOptions = { port: number; persist: string; vars: Record<string, string>; readyMs: number };

/** How many times a start that lost a race for one of workerd's internal sockets is retried. */
const START_ATTEMPTS = 4;

/**
 * Starts wrangler dev. Several starting at the same instant (test projects run in parallel) can
 * collide on a socket workerd binds internally ("Address already in use"); such a start exits at
 * once and is simply made again.
 */
async function launch(o: LaunchOptions): Promise<Process> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchOnce(o);
    } catch (error) {
      if (!(error instanceof LostSocketRace) || attempt === START_ATTEMPTS) throw error;
    }
  }
}

class LostSocketRace extends Error {}

async function launchOnce(o: LaunchOptions): Promise<Process> {
  const args = [
    path.join(REPO, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
    ["--port", String(o.port)],
    ["--ip", "127.0.0.1"],
    ["--persist-to", o.persist],
    ["--log-level", "warn"],
    "--show-interactive-dev-session=false",
    Object.entries(o.vars).map(([name, value]) => ["--var", `${name}:${value}`]),
  ].flat(2);
  let output = "";
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: REPO,
    detached: true, // its own process group, so a kill takes workerd down with it
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
  });
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  let exited = false;
  child.on("exit", () => (exited = true));
  const url = `http://127.0.0.1:${o.port}`;

  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // already gone
    }
  };
  const running: Process = {
    output: () => output,
    async kill(name) {
      if (child.pid === undefined || exited) return;
      signal(name);
      await waitFor(`wrangler dev to exit after ${name}`, () => exited, 10_000).catch(() => signal("SIGKILL"));
      // workerd may outlive wrangler's node process for a moment; the port must be free again.
      await waitFor(`port ${o.port} to be free after wrangler dev's ${name}`, () => portFree(o.port), 10_000);
    },
  };

  try {
    await waitFor(
      `wrangler dev to answer on ${url}`,
      async () => {
        if (exited) return true; // no use waiting: said below
        const res = await fetch(`${url}/v1/runs/__ready__`, { signal: AbortSignal.timeout(2000) });
        return res.status > 0;
      },
      o.readyMs,
      250,
    );
    if (exited) {
      const message = `wrangler dev exited before answering on ${url}\nwrangler output:\n${output.slice(-3000)}`;
      throw output.includes("Address already in use") ? new LostSocketRace(message) : new Error(message);
    }
  } catch (err) {
    await running.kill("SIGTERM");
    if (err instanceof LostSocketRace) throw err;
    fs.rmSync(o.persist, { recursive: true, force: true });
    if (exited) throw err;
    throw new Error(`${(err as Error).message}\nwrangler output:\n${output.slice(-3000)}`);
  }
  return running;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
