import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { BridgeExit, EXIT } from "../exit.ts";
import type { NetworkPolicy } from "./policy.ts";

/** The programs a sandbox needs on this host, found on PATH. */
export interface SandboxTools {
  bwrap: string;
  socat?: string;
}

/** The first executable `name` on PATH, or null. */
export function onPath(name: string, searchPath = process.env.PATH ?? ""): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Makes sure a sandbox can be set up here before anything of the run is started: bwrap on PATH
 * and able to create the namespaces (a kernel or container without user namespaces refuses),
 * socat for `allow:`. Refuses with one line otherwise; a run never starts unsandboxed instead.
 */
export function requireSandboxTools(network: NetworkPolicy): SandboxTools {
  const refuse = (why: string) =>
    new BridgeExit(EXIT.failure, `--sandbox os: cannot set up the sandbox: ${why} (or run with --sandbox none)`);
  const bwrap = onPath("bwrap");
  if (!bwrap) throw refuse("bwrap is not on PATH; install bubblewrap (apt-get install bubblewrap)");
  const trial = spawnSync(
    bwrap,
    // The one program certainly there, by its absolute path: bwrap itself.
    [
      "--unshare-pid",
      "--unshare-net",
      "--ro-bind",
      "/",
      "/",
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--",
      bwrap,
      "--version",
    ],
    { encoding: "utf8", timeout: 10_000 },
  );
  if (trial.error || trial.status !== 0) {
    const detail = (trial.stderr || trial.error?.message || `exit status ${trial.status}`).trim().split("\n")[0];
    throw refuse(`bwrap cannot create namespaces here: ${detail}`);
  }
  if (network.kind !== "allow") return { bwrap };
  const socat = onPath("socat");
  if (!socat) throw refuse("--network allow: needs socat on PATH; install socat (apt-get install socat)");
  return { bwrap, socat };
}
