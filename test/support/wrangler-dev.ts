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
  const args = [
    path.join(REPO, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
    ["--port", String(port)],
    ["--ip", "127.0.0.1"],
    ["--persist-to", persist],
    ["--log-level", "warn"],
    "--show-interactive-dev-session=false",
    Object.entries(vars).map(([name, value]) => ["--var", `${name}:${value}`]),
  ].flat(2);
  let output = "";
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: REPO,
    detached: true, // its own process group, so stop() takes workerd down with it
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
  });
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  let exited = false;
  child.on("exit", () => (exited = true));
  const url = `http://127.0.0.1:${port}`;

  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // already gone
    }
  };
  const stop = async () => {
    if (child.pid !== undefined && !exited) {
      signal("SIGTERM");
      await waitFor("wrangler dev to exit after SIGTERM", () => exited, 10_000).catch(() => signal("SIGKILL"));
    }
    fs.rmSync(persist, { recursive: true, force: true });
  };

  try {
    await waitFor(
      `wrangler dev to answer on ${url}`,
      async () => {
        if (exited) throw new Error(`wrangler dev exited: ${output.slice(-2000)}`);
        const res = await fetch(`${url}/v1/runs/__ready__`, { signal: AbortSignal.timeout(2000) });
        return res.status > 0;
      },
      readyMs,
      250,
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\nwrangler output:\n${output.slice(-3000)}`);
  }
  return { url, port, output: () => output, stop };
}
