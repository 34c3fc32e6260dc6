/**
 * `npm run serve`: this repo's production bundle on plain workerd, on one machine.
 *
 * Builds the bundle as `wrangler deploy` would upload it, generates a workerd config from the
 * wrangler config (Durable Objects with SQLite on local disk, alarms, assets), and runs the
 * workerd binary that wrangler itself installs. The same code path as production, without
 * wrangler dev's proxy and reloader; one process, so no placement across machines.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { BuildFailed, buildBundle, REPO } from "./build.ts";
import { type DevPool, startDevPool } from "./dev-pool.ts";
import { parseOptions, type ServeOptions, USAGE, UsageError } from "./options.ts";
import { writeMeterEntry } from "./meter-entry.ts";
import { MissingSecret, readDevVars, resolveSecrets } from "./secrets.ts";
import { socketAddress, renderWorkerdConfig } from "./workerd-config.ts";
import { readWorkerSpec, UnsupportedConfig } from "./worker-spec.ts";

const workerd = createRequire(import.meta.url)("workerd") as {
  default: string;
  compatibilityDate: string;
  version: string;
};

const DRAIN_MS = 3_000;
const KILL_MS = 10_000;
const READY_MS = 60_000;

function log(line: string): void {
  process.stderr.write(`[serve] ${line}\n`);
}

/** Writes the build dir: the bundle as `worker.js`, companions, and `config.capnp`. Returns workerd's environment. */
function prepare(options: ServeOptions, buildDir: string): NodeJS.ProcessEnv {
  const spec = readWorkerSpec(options.configPath);
  if (spec.compatibilityDate > workerd.compatibilityDate) {
    throw new UnsupportedConfig(
      `compatibility_date ${spec.compatibilityDate} is newer than this workerd (${workerd.version}) supports (${workerd.compatibilityDate})`,
    );
  }
  const secrets = resolveSecrets(
    process.env,
    readDevVars(options.configPath),
    options.dev,
    new Set(Object.keys(options.vars)),
  );
  for (const warning of [...spec.warnings, ...secrets.warnings]) log(`warning: ${warning}`);

  const built = buildBundle(options.configPath, buildDir);
  if (built !== "worker.js") fs.renameSync(path.join(buildDir, built), path.join(buildDir, "worker.js"));
  const modules = options.meter ? writeMeterEntry(buildDir, spec) : ["worker.js"];
  if (options.meter) log("warning: --meter wraps the bundle to count requests and rows (bench only)");
  const router = spec.assets ? "assets-router.js" : null;
  if (router) fs.copyFileSync(path.join(REPO, "serve", router), path.join(buildDir, router));

  const env: NodeJS.ProcessEnv = { ...process.env };
  const textFromEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...secrets.values, ...options.vars })) {
    textFromEnv[name] = `SERVE_BINDING_${name}`;
    env[`SERVE_BINDING_${name}`] = value;
  }
  fs.mkdirSync(options.dataDir, { recursive: true });
  const config = renderWorkerdConfig({
    spec,
    modules,
    dataDir: options.dataDir,
    address: socketAddress(options.host, options.port),
    textFromEnv,
    router,
  });
  fs.writeFileSync(path.join(buildDir, "config.capnp"), config);

  const from = Object.entries(secrets.sources).map(([name, source]) => `${name} from ${source}`);
  const varNames = Object.keys(options.vars).map((name) => `${name} from --var`);
  log(`secrets: ${[...from, ...varNames].join(", ") || "none"}`);
  if (spec.assets) log(`assets: ${spec.assets.directory}`);
  return env;
}

async function waitUntilAnswering(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error("workerd exited before it answered");
    try {
      const res = await fetch(`${url}/__serve_ready__`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`workerd did not answer on ${url} within ${READY_MS / 1000} s`);
}

async function main(): Promise<number> {
  let options: ServeOptions | "help";
  try {
    options = parseOptions(process.argv.slice(2), process.cwd());
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const buildDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-run-serve-"));
  const cleanUp = () => fs.rmSync(buildDir, { recursive: true, force: true });
  let env: NodeJS.ProcessEnv;
  try {
    env = prepare(options, buildDir);
  } catch (error) {
    cleanUp();
    if (error instanceof MissingSecret || error instanceof UnsupportedConfig || error instanceof BuildFailed) {
      log(`cannot start: ${error.message}`);
      return 2;
    }
    throw error;
  }

  const args = ["serve", "config.capnp", ...(options.inspector ? ["--inspector-addr", options.inspector] : [])];
  if (options.inspector) log(`inspector on ${options.inspector}; bundle and source map in ${buildDir}`);
  const spawnWorkerd = () => {
    const child = spawn(workerd.default, args, { cwd: buildDir, env, stdio: ["ignore", "inherit", "inherit"] });
    const exited = new Promise<number>((resolve) =>
      child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1))),
    );
    return { child, exited };
  };
  let current = spawnWorkerd();
  // SIGTERM lets workerd drain: it stops accepting and waits for open connections. A WebSocket
  // the server closed can linger ~10 s (the close handshake with Node's client), so after
  // DRAIN_MS a SIGINT makes workerd exit at once; every write it acknowledged is already on disk.
  let stopping = false;
  // SIGUSR2 (bench/measure-storm.ts): a local deploy. workerd is killed, every socket dropping at
  // once as a deploy drops them, and started again on the same build and data directory.
  let restarting = false;
  let restartAskedAt = 0;
  // The embedded pool host as it starts: a stop that lands while it is still starting waits for
  // it and stops it, instead of leaving a host started after workerd was gone.
  let pool: Promise<DevPool | null> = Promise.resolve(null);
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      current.child.kill("SIGINT");
      return;
    }
    stopping = true;
    await (await pool)?.stop();
    log(`${signal}: stopping workerd`);
    const { child, exited } = current;
    child.kill("SIGTERM");
    const interrupt = setTimeout(() => {
      log(`workerd still draining ${DRAIN_MS / 1000} s after SIGTERM: SIGINT`);
      child.kill("SIGINT");
    }, DRAIN_MS);
    const kill = setTimeout(() => {
      log(`workerd still running ${KILL_MS / 1000} s after SIGTERM: SIGKILL`);
      child.kill("SIGKILL");
    }, KILL_MS);
    await exited;
    clearTimeout(interrupt);
    clearTimeout(kill);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));

  const probeHost = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const url = `http://${socketAddress(probeHost, options.port)}`;
  const serving = `serving http://${socketAddress(options.host, options.port)} (workerd ${workerd.version}, data ${options.dataDir})`;
  try {
    await Promise.race([waitUntilAnswering(url, current.child), current.exited]);
    if (!stopping && current.child.exitCode === null) {
      log(serving);
      process.on("SIGUSR2", () => {
        if (stopping || restarting) return;
        restarting = true;
        restartAskedAt = Date.now();
        log("SIGUSR2: restarting workerd (every socket drops)");
        current.child.kill("SIGKILL");
      });
      if (options.pool) {
        pool = startDevPool({ url, dataDir: options.dataDir, say: log }).catch((error: Error) => {
          log(`embedded pool not started: ${error.message}`);
          return null;
        });
        await pool;
      }
    }
  } catch (error) {
    log(`cannot start: ${(error as Error).message}`);
    current.child.kill("SIGKILL");
    await current.exited;
    cleanUp();
    return 1;
  }
  for (;;) {
    const code = await current.exited;
    if (restarting && !stopping) {
      log(`workerd gone ${Date.now() - restartAskedAt} ms after SIGUSR2: starting it again`);
      current = spawnWorkerd();
      try {
        await Promise.race([waitUntilAnswering(url, current.child), current.exited]);
      } catch (error) {
        log(`cannot restart: ${(error as Error).message}`);
        current.child.kill("SIGKILL");
      }
      if (!stopping && current.child.exitCode === null)
        log(`restarted in ${Date.now() - restartAskedAt} ms: ${serving}`);
      restarting = false;
      continue;
    }
    cleanUp();
    if (stopping) {
      log("stopped");
      return 0;
    }
    log(`workerd exited unexpectedly (${code})`);
    return code === 0 ? 1 : code;
  }
}

process.exitCode = await main();
