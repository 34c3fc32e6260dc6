/**
 * The servers under test. Ours (`serve`, `dev`: bench/servers-ours.ts) and the reference Durable
 * Streams server in file and memory modes (here), each on loopback, each stopped with its temp
 * state removed by its own `stop()`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO } from "../test/support/wrangler-dev.ts";
import { treeCpuMs, treeRss } from "./rss.ts";
import { sleep } from "./sleep.ts";

export type TargetName = "serve" | "base" | "dev" | "ref-file" | "ref-mem" | "serve-meter";

/** A one-line 404 worker on the same platform as one of ours: the per-request floor. */
export interface Floor {
  url: string;
  label: string;
  /** CPU milliseconds its workerd processes have used so far. */
  cpuMs(): number;
  stop(): Promise<void>;
}

export interface Target {
  name: TargetName;
  label: string;
  url: string;
  /** Ours has runs: the runner socket, viewers, the run API. The reference has streams only. */
  ours: boolean;
  floor: Floor | null;
  /** Resident bytes of the server's runtime processes (workerd for ours, node for the reference). */
  rss(): number;
  /** CPU milliseconds those processes have used so far. */
  cpuMs(): number;
  /** The server's own log, shown when something goes wrong. */
  output(): string;
  /** False once the server's process has exited (a crash, unless we stopped it). */
  alive(): boolean;
  stop(): Promise<void>;
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
    ours: false,
    floor: null,
    rss: () => treeRss(child.pid as number, /^node/),
    cpuMs: () => treeCpuMs(child.pid as number, /^node/),
    output: () => output,
    alive: () => !exited,
    stop,
  };
}
