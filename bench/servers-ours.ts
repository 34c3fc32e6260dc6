/**
 * Our worker under each mode, and the one-line floor worker under the same platform:
 * - `serve`: `node serve/main.ts` (what `npm run serve` runs): the production bundle on plain workerd;
 * - `dev`: `wrangler dev` (workerd behind wrangler's proxy, as `npm start` runs it);
 * - `serve-meter`: `serve` with `--meter`, only for the cost-model counts.
 * Each starts on a free loopback port with throwaway state, and stops with its state removed.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { freePort, REPO } from "../test/support/wrangler-dev.ts";
import { type ServerProcess, spawnServer, waitUntilAnswering } from "./child.ts";
import { writeOneObjectConfig } from "./one-object-worker.ts";
import { BENCH_API_KEY } from "./client.ts";
import { treeCpuMs, treeRss } from "./rss.ts";
import { sleep } from "./sleep.ts";
import type { Floor, Target } from "./targets.ts";

const WORKERD = (createRequire(import.meta.url)("workerd") as { default: string }).default;
const FLOOR_SOURCE = fs.readFileSync(path.join(REPO, "bench/floor-worker.js"), "utf8");
const COMPAT_DATE = "2026-11-01";

function ourTarget(
  name: Target["name"],
  label: string,
  url: string,
  server: ServerProcess,
  dir: string,
  floor: Floor | null,
): Target {
  return {
    name,
    label,
    url,
    ours: true,
    floor,
    rss: () => treeRss(server.pid, /^workerd$/),
    cpuMs: () => treeCpuMs(server.pid, /^workerd$/),
    output: () => server.output(),
    alive: () => !server.exited(),
    async stop() {
      await Promise.allSettled([server.stop(), floor?.stop()]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `wrangler dev` of `configPath`, in `cwd`, with `--var`s. */
async function wranglerDev(configPath: string | null, cwd: string, persist: string, vars: Record<string, string>) {
  const port = await freePort();
  const args = [
    path.join(REPO, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
    ...(configPath ? ["--config", configPath] : []),
    ...["--port", String(port), "--ip", "127.0.0.1", "--persist-to", persist],
    ...["--log-level", "warn", "--show-interactive-dev-session=false"],
    ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" };
  const server = spawnServer(process.execPath, args, { cwd, env });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilAnswering(`${url}/__ready__`, server, "wrangler dev");
  return { server, url };
}

export async function startDevFloor(): Promise<Floor> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-floor-dev-"));
  // Its own config, so wrangler does not pick up the repo's wrangler.toml (Durable Objects, vars).
  const config = path.join(dir, "wrangler.json");
  fs.writeFileSync(path.join(dir, "floor.js"), FLOOR_SOURCE);
  fs.writeFileSync(
    config,
    JSON.stringify({
      name: "bench-floor",
      main: "floor.js",
      compatibility_date: COMPAT_DATE,
      durable_objects: { bindings: [{ name: "FLOOR", class_name: "FloorStore" }] },
      migrations: [{ tag: "v1", new_sqlite_classes: ["FloorStore"] }],
    }),
  );
  const { server, url } = await wranglerDev(config, dir, path.join(dir, "state"), {});
  return {
    url,
    label: "one-line worker under wrangler dev",
    cpuMs: () => treeCpuMs(server.pid, /^workerd$/),
    stop: async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startServeFloor(): Promise<Floor> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-floor-workerd-"));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, "floor.js"), FLOOR_SOURCE);
  writeOneObjectConfig({
    dir,
    module: "floor.js",
    binding: "FLOOR",
    className: "FloorStore",
    port,
    compatibilityDate: COMPAT_DATE,
  });
  const server = spawnServer(WORKERD, ["serve", "config.capnp"], { cwd: dir });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilAnswering(`${url}/ready`, server, "floor worker on workerd", 30_000, 404);
  return {
    url,
    label: "one-line worker on plain workerd",
    cpuMs: () => treeCpuMs(server.pid, /^workerd$/),
    stop: async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Vars both of our targets run with: anonymous streams (the reference has no auth), and room for
 * the 1,000-viewer fan-out past the default cap of 256 viewers a run (VIEWERS_PER_RUN_MAX).
 */
const BENCH_VARS: Record<string, string> = { ALLOW_ANONYMOUS_STREAMS: "true", VIEWERS_PER_RUN_MAX: "2000" };

export async function startDev(): Promise<Target> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-dev-"));
  const { server, url } = await wranglerDev(null, REPO, dir, BENCH_VARS);
  const floor = await startDevFloor().catch(async (error: Error) => {
    await server.stop();
    throw error;
  });
  return ourTarget("dev", "ours under wrangler dev", url, server, dir, floor);
}

/**
 * `meter`: the --meter build (counts only). `inspector`: host:port for workerd's inspector
 * (profiles). `baseline`: serve another commit's checkout (bench/baseline.ts) as target `base`.
 */
export async function startServe(
  options: { meter?: boolean; inspector?: string; baseline?: { dir: string; commit: string } } = {},
): Promise<Target> {
  const meter = options.meter ?? false;
  const repo = options.baseline?.dir ?? REPO;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-serve-"));
  const port = await freePort();
  const args = [
    path.join(repo, "serve/main.ts"),
    "--port",
    String(port),
    "--data",
    dir,
    ...Object.entries(BENCH_VARS).flatMap(([name, value]) => ["--var", `${name}=${value}`]),
  ];
  if (meter) args.push("--meter");
  if (options.inspector) args.push("--inspector", options.inspector);
  const env = {
    ...process.env,
    API_KEYS: `${BENCH_API_KEY}=alpha`,
    TOKEN_SECRET: `bench-${process.pid}-${Date.now()}`,
  };
  const server = spawnServer(process.execPath, args, { cwd: repo, env });
  const url = `http://127.0.0.1:${port}`;
  // Its own "serving" line, not a probe of ours: serve's readiness probe must have landed before
  // anything is measured (the meter counts it otherwise).
  const deadline = Date.now() + 90_000;
  while (!server.output().includes(`serving ${url}`)) {
    if (server.exited() || Date.now() > deadline) {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`npm run serve did not start on ${url}:\n${server.output().slice(-3000)}`);
    }
    await sleep(100);
  }
  const floor = meter
    ? null
    : await startServeFloor().catch(async (error: Error) => {
        await server.stop();
        fs.rmSync(dir, { recursive: true, force: true });
        throw error;
      });
  const name = meter ? "serve-meter" : options.baseline ? "base" : "serve";
  return ourTarget(
    name,
    meter
      ? "ours under npm run serve --meter"
      : options.baseline
        ? `ours at ${options.baseline.commit} under npm run serve`
        : "ours under npm run serve",
    url,
    server,
    dir,
    floor,
  );
}
