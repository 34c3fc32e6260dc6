import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { waitFor } from "./wait.ts";

export const REPO = path.resolve(import.meta.dirname, "../../..");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface Edge {
  url: string;
  port: number;
  output: () => string;
  stop(): Promise<void>;
}

/** A real `wrangler dev` on a free loopback port with a throwaway state dir. */
export async function startEdge(): Promise<Edge> {
  const port = await freePort();
  const persist = fs.mkdtempSync(path.join(os.tmpdir(), "edge-state-"));
  let output = "";
  const child: ChildProcess = spawn(
    process.execPath,
    [
      path.join(REPO, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "--port",
      String(port),
      "--ip",
      "127.0.0.1",
      "--persist-to",
      persist,
      "--log-level",
      "warn",
      "--show-interactive-dev-session=false",
    ],
    { cwd: REPO, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" } },
  );
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  let exited = false;
  child.on("exit", () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.pid !== undefined && !exited) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
      await waitFor("wrangler dev to exit after SIGTERM", () => exited, 10_000).catch(() => {
        try {
          process.kill(-(child.pid as number), "SIGKILL");
        } catch {}
      });
    }
    fs.rmSync(persist, { recursive: true, force: true });
  };
  try {
    await waitFor(
      `wrangler dev to answer on ${url}`,
      async () => {
        if (exited) throw new Error(`wrangler dev exited: ${output.slice(-2000)}`);
        const res = await fetch(`${url}/v1/runs/does-not-exist`, {
          headers: { authorization: "Bearer dev-key-alpha" },
          signal: AbortSignal.timeout(2000),
        });
        return res.status > 0;
      },
      90_000,
      250,
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\nwrangler output:\n${output.slice(-3000)}`);
  }
  return { url, port, output: () => output, stop };
}
