import { spawn } from "node:child_process";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import type { Adapter } from "./adapters/types.ts";
import { CommandFile } from "./command-file.ts";
import { type RunPaths, type RunSpec, writeFileAtomic } from "./rundir.ts";

/**
 * Lays out a run directory and starts the supervisor, which starts the agent. Order matters:
 * the journal and the adapter's startup inbox exist before the spec, and the spec (written
 * atomically) is what makes the journal "appear" to an attaching bridge.
 */
export async function startAgent(
  paths: RunPaths,
  spec: RunSpec,
  adapter: Adapter,
  env: Record<string, string>,
  secrets: readonly string[] = [],
): Promise<number> {
  fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(paths.journal, "", { flag: "a", mode: 0o600 });
  const startup = adapter.startup(spec);
  if (startup.length) await new CommandFile(paths.inbox).appendOnce(startup);
  writeFileAtomic(paths.spec, `${JSON.stringify(spec, null, 2)}\n`);
  return launchSupervisor(paths, spec, env, secrets);
}

/**
 * Spawns `node supervisor.ts <dir>` detached in its own session; returns its pid. `secrets` (the
 * runner token) go to it over a pipe on fd 3, to be redacted from the journal with the values
 * of the `--env` variables, which it finds in its environment.
 */
export function launchSupervisor(
  paths: RunPaths,
  spec: RunSpec,
  env: Record<string, string>,
  secrets: readonly string[] = [],
): number {
  // From a clone this module is src/launch.ts; in the packed bundle it is dist/cli.mjs.
  const bundled = import.meta.url.endsWith(".mjs");
  const script = fileURLToPath(new URL(bundled ? "./supervisor.mjs" : "./supervisor.ts", import.meta.url));
  const logFd = fs.openSync(paths.supervisorLog, "a", 0o600);
  const child = spawn(
    process.execPath,
    ["--disable-warning=ExperimentalWarning", script, paths.dir, "--secrets-fd=3"],
    {
      cwd: spec.cwd,
      env,
      detached: true, // own session: the agent outlives this bridge
      stdio: ["ignore", "ignore", logFd, "pipe"],
    },
  );
  const secretsPipe = child.stdio[3] as NodeJS.WritableStream | null;
  secretsPipe?.on("error", () => {}); // a supervisor that died at once: its log says why
  secretsPipe?.end(JSON.stringify(secrets));
  child.unref();
  fs.closeSync(logFd);
  return child.pid ?? -1;
}
