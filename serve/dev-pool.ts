/**
 * The embedded default pool of `npm start` and `npm run serve -- --dev`: one local pool host
 * (2 slots, the profiles of agents.json) beside the edge, so a run created with `--agent demo`
 * runs and finishes with no other command. Its pool key is minted for the dev tenant through the
 * API with the dev API key, kept in the data directory and reused while the edge still lists it.
 * A deployment never starts one: only these two local commands call this.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";

const REPO = path.resolve(import.meta.dirname, "..");
const BRIDGE = path.join(REPO, "runner-bridge/bin/runner-bridge.mjs");
const READY_MS = 120_000;
const STOP_MS = 10_000;
export const DEV_POOL_SLOTS = 2;

export interface DevPool {
  stop(): Promise<void>;
}

type Say = (line: string) => void;

/** The dev tenant's API key: the first entry of API_KEYS (environment, else .dev.vars). */
export function devApiKey(env: NodeJS.ProcessEnv = process.env): string | null {
  let keys = env.API_KEYS;
  const file = path.join(REPO, ".dev.vars");
  if (!keys && fs.existsSync(file)) keys = parseEnv(fs.readFileSync(file, "utf8")).API_KEYS;
  const first = keys?.split(",")[0]?.split("=")[0]?.trim();
  return first || null;
}

/** Waits for the edge, gets a pool key, starts `runner-bridge pool`. Resolves once the pool runs. */
export async function startDevPool(o: { url: string; dataDir: string; say: Say }): Promise<DevPool> {
  const apiKey = devApiKey();
  if (!apiKey) throw new Error("no API key in API_KEYS (environment or .dev.vars) to mint the dev pool's key with");
  const key = await poolKey(o.url, apiKey, path.join(o.dataDir, "dev-pool-key.json"));
  const pool = launchPoolHost({ url: o.url, key, slots: DEV_POOL_SLOTS, dir: path.join(o.dataDir, "pool") });
  o.say(`embedded pool: ${DEV_POOL_SLOTS} slots, profiles from agents.json (leave it out with --no-pool)`);
  return pool;
}

export interface PoolHostChild extends DevPool {
  child: ChildProcess;
  exited(): boolean;
}

/** `runner-bridge pool` with the repository's agents.json, the key in its environment only. */
export function launchPoolHost(o: {
  url: string;
  key: string;
  slots: number;
  dir: string;
  quiet?: boolean;
}): PoolHostChild {
  const child = spawn(
    process.execPath,
    [
      ...[BRIDGE, "pool", "--edge", o.url, "--slots", String(o.slots)],
      ...["--agents", path.join(REPO, "agents.json"), "--dir", o.dir, ...(o.quiet ? ["--quiet"] : [])],
    ],
    { cwd: REPO, env: { ...process.env, RUNNER_POOL_KEY: o.key }, stdio: ["ignore", "inherit", "inherit"] },
  );
  let gone = false;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      gone = true;
      resolve();
    }),
  );
  return { child, exited: () => gone, stop: () => stopChild(child, exited) };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_MS);
  await exited;
  clearTimeout(timer);
}

/** The stored key while the edge still lists its id; else a new one, stored (mode 0600). */
async function poolKey(url: string, apiKey: string, file: string): Promise<string> {
  const call = (method: string, route: string, body?: unknown) =>
    fetch(url + route, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
  const listed = await untilAnswered(() => call("GET", "/v1/pool-keys"));
  if (!listed.ok) throw new Error(`GET /v1/pool-keys answered ${listed.status}: ${await listed.text()}`);
  const { keys } = (await listed.json()) as { keys: { id: string }[] };
  const stored = readStored(file);
  if (stored && keys.some((k) => k.id === stored.id)) return stored.key;
  const minted = await call("POST", "/v1/pool-keys", { label: "embedded dev pool" });
  if (minted.status !== 201) throw new Error(`POST /v1/pool-keys answered ${minted.status}: ${await minted.text()}`);
  const { id, key } = (await minted.json()) as { id: string; key: string };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ id, key })}\n`, { mode: 0o600 });
  return key;
}

function readStored(file: string): { id: string; key: string } | null {
  try {
    const value = JSON.parse(fs.readFileSync(file, "utf8")) as { id?: unknown; key?: unknown };
    return typeof value.id === "string" && typeof value.key === "string" ? { id: value.id, key: value.key } : null;
  } catch {
    return null;
  }
}

/** The first answer of any status; a refused connection (the edge still starting) is tried again. */
async function untilAnswered(request: () => Promise<Response>): Promise<Response> {
  const deadline = Date.now() + READY_MS;
  for (;;) {
    try {
      return await request();
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`the edge did not answer within ${READY_MS / 1000} s: ${(err as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
