/**
 * The servers under test, each started on loopback and stopped (with its temp state removed)
 * by its own `stop()`: this worker under `wrangler dev`, the reference server in file and memory
 * modes, and the one-line floor worker for the baseline.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, REPO, startWranglerDev } from "../test/support/wrangler-dev.ts";
import { sleep } from "./sleep.ts";

export interface Target {
  name: string;
  label: string;
  url: string;
  /** Runner WebSocket ingest is only possible on ours. */
  hasRunnerSocket: boolean;
  /** The server's own log, shown when something goes wrong. */
  output(): string;
  stop(): Promise<void>;
}

export async function startOurs(): Promise<Target> {
  const dev = await startWranglerDev({ ALLOW_ANONYMOUS_STREAMS: "true" });
  return {
    name: "ours",
    label: "ours (wrangler dev)",
    url: dev.url,
    hasRunnerSocket: true,
    output: () => dev.output(),
    stop: () => dev.stop(),
  };
}

export interface FloorWorker {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * `bench/floor-worker.ts` (a one-line 404 worker) under its own `wrangler dev`, outside the repo's
 * config: the local platform's per-request floor. Only the baseline measurement uses it.
 */
export async function startFloorWorker(): Promise<FloorWorker> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-floor-"));
  // Its own config, so wrangler does not pick up the repo's wrangler.toml (Durable Objects, vars).
  const config = path.join(dir, "wrangler.json");
  const main = path.join(REPO, "bench/floor-worker.ts");
  fs.writeFileSync(config, JSON.stringify({ name: "bench-floor", main, compatibility_date: "2026-11-01" }));
  const args = [
    path.join(REPO, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
    ...["--config", config],
    ...["--port", String(port), "--ip", "127.0.0.1", "--persist-to", path.join(dir, "state")],
    ...["--log-level", "warn", "--show-interactive-dev-session=false"],
  ];
  const child = spawn(process.execPath, args, {
    cwd: dir,
    detached: true, // its own process group, so stop() takes workerd down with it
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
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
  const stop = async () => {
    if (!exited) {
      signal("SIGTERM");
      const deadline = Date.now() + 10_000;
      while (!exited && Date.now() < deadline) await sleep(50);
      if (!exited) signal("SIGKILL");
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited || /\[ERROR\]/.test(output)) break;
    try {
      const res = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 404) return { url, output: () => output, stop };
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) break;
    await sleep(250);
  }
  await stop();
  throw new Error(`floor worker's wrangler dev did not answer on ${url}:\n${output.slice(-3000)}`);
}

export async function startReference(mode: "file" | "memory"): Promise<Target> {
  const dataDir = mode === "file" ? fs.mkdtempSync(path.join(os.tmpdir(), "ds-ref-bench-")) : null;
  const args = [path.join(REPO, "bench/reference-server.ts"), ...(dataDir ? [dataDir] : [])];
  const child: ChildProcess = spawn(process.execPath, args, { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  let exited = false;
  child.on("exit", () => (exited = true));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`reference server (${mode}) not ready in 20 s: ${output}`)),
      20_000,
    );
    child.stdout?.on("data", (chunk) => {
      output += chunk;
      const match = /READY (\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`reference server (${mode}) exited with ${code}: ${output}`));
    });
  });
  const stop = async () => {
    if (!exited) {
      child.kill("SIGTERM");
      const deadline = Date.now() + 8_000;
      while (!exited && Date.now() < deadline) await sleep(50);
      if (!exited) child.kill("SIGKILL");
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    name: mode === "file" ? "ref-file" : "ref-mem",
    label: mode === "file" ? "reference, file store" : "reference, memory store",
    url,
    hasRunnerSocket: false,
    output: () => output,
    stop,
  };
}
