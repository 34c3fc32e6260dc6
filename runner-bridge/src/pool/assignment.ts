import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { PoolEdgeFrame } from "../../../src/protocol/pool.ts";
import { groupAlive, terminateGroup } from "../proctree.ts";
import { readPid, runPaths } from "../rundir.ts";
import { sandboxArgv } from "../sandbox/policy.ts";
import type { ServedProfile } from "./profiles.ts";

export type AssignFrame = Extract<PoolEdgeFrame, { type: "assign" }>;

export interface LaunchOptions {
  edge: string;
  /** The pool's own directory; the assignment's is made inside it. */
  root: string;
  graceMs: number;
  /** Every line the bridge writes to stderr (already in the assignment's bridge.log). */
  onLine(line: string): void;
}

// From a clone this module is src/pool/assignment.ts; in the packed bundle it is dist/cli.mjs.
const BIN = fileURLToPath(
  new URL(
    import.meta.url.endsWith(".mjs") ? "../bin/runner-bridge.mjs" : "../../bin/runner-bridge.mjs",
    import.meta.url,
  ),
);

/**
 * One assignment on this host: a `runner-bridge run` (or `resume`) child process in a fresh
 * directory of its own, `<root>/<runId>/g<generation>-<assignmentId>/`, whose `workspace/` is the
 * agent's working directory. The runner token reaches the child in its environment only.
 */
export class Assignment {
  readonly id: string;
  readonly runId: string;
  readonly dir: string;
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private readonly graceMs: number;
  private claimedRun = false;
  private exitCode: number | null | undefined;

  constructor(frame: AssignFrame, served: ServedProfile, o: LaunchOptions) {
    this.id = frame.assignmentId;
    this.runId = frame.runId;
    this.graceMs = o.graceMs;
    this.dir = path.join(o.root, frame.runId, `g${frame.generation}-${pathSafe(frame.assignmentId)}`);
    const workspace = path.join(this.dir, "workspace");
    fs.mkdirSync(workspace, { recursive: true, mode: 0o700 });
    const log = fs.openSync(path.join(this.dir, "bridge.log"), "a", 0o600);
    const env: NodeJS.ProcessEnv = { ...process.env, RUNNER_BRIDGE_TOKEN: frame.runnerToken };
    delete env.RUNNER_POOL_KEY; // the pool's credential is the host's, never a run's
    const where = { edge: o.edge, dir: this.bridgeDir, workspace, root: o.root };
    this.child = spawn(process.execPath, [BIN, ...bridgeArgv(frame, served, where)], {
      cwd: workspace,
      env,
      stdio: ["ignore", log, "pipe"],
    });
    let rest = "";
    this.child.stderr?.on("data", (chunk: Buffer) => {
      fs.writeSync(log, chunk);
      const lines = (rest + chunk.toString("utf8")).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        if (/^runner-bridge: claimed run /.test(line)) this.claimedRun = true;
        o.onLine(line);
      }
    });
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code) => {
        this.exitCode = code;
        fs.closeSync(log);
        resolve(code);
      });
      this.child.on("error", (err) => {
        o.onLine(`cannot start runner-bridge: ${err.message}`);
      });
    });
  }

  /** The bridge's own run directory (journal, spec, pid files). */
  get bridgeDir(): string {
    return path.join(this.dir, "run");
  }

  /** The bridge said it claimed the run (its log line); from then on only the edge may stop it. */
  get claimed(): boolean {
    return this.claimedRun;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Stops the bridge and the agent it started (SIGKILL, then SIGTERM→SIGKILL to the agent's group). */
  async stop(): Promise<void> {
    if (this.running) this.child.kill("SIGKILL");
    await this.exited;
    const pgid = readPid(runPaths(this.bridgeDir).agentPid);
    if (pgid !== null && groupAlive(pgid)) await terminateGroup(pgid, this.graceMs).catch(() => {});
  }

  /** After a clean end (the run is over and the edge has it all): nothing here is needed any more. */
  removeFiles(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The child's command line: the token is never in it (RUNNER_BRIDGE_TOKEN). */
export function bridgeArgv(
  frame: AssignFrame,
  served: ServedProfile,
  where: { edge: string; dir: string; workspace: string; root: string },
): string[] {
  const { profile } = served;
  const argv = [
    frame.start,
    "--edge",
    where.edge,
    "--run",
    frame.runId,
    "--dir",
    where.dir,
    "--adapter",
    profile.adapter,
  ];
  // Names the host has not set are left out rather than failing the run (e.g. a CLI logged in by file).
  for (const name of profile.env) if (process.env[name] !== undefined) argv.push("--env", name);
  // The prompt is the run's first user message: a resumed session has it already.
  if (frame.start === "run" && frame.prompt !== undefined) argv.push("--prompt", frame.prompt);
  if (profile.checkpoint !== undefined) argv.push("--checkpoint", profile.checkpoint);
  // Inside a sandbox no agent sees the pool's root (other runs' journals), only its own workspace.
  const sandbox = { ...served.sandbox, workspace: where.workspace };
  if (sandbox.mode === "os") sandbox.hide = [where.root];
  return [...argv, ...sandboxArgv(sandbox), "--", ...served.command];
}

/** An assignment id as a directory name component. */
function pathSafe(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80);
}
