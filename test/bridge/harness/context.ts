import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { runPaths, readPid } from "../../../runner-bridge/src/rundir.ts";
import { groupAlive, signalGroup } from "../../../runner-bridge/src/proctree.ts";
import { Api, type CreatedRun } from "../../support/api.ts";
import {
  attachArgs,
  type BridgeProcess,
  FIXTURES,
  NODE,
  removeSandboxedFiles,
  runArgs,
  startBridge,
  tempDir,
} from "./bridge.ts";
import { type Edge, startEdge } from "./edge.ts";
import { waitFor } from "../../support/wait.ts";

export interface EdgeContext {
  edge: Edge;
  api: Api;
  /** Starts a bridge that is killed after the test if it is still running. */
  bridge(args: string[], options?: { env?: Record<string, string>; bin?: string; cwd?: string }): BridgeProcess;
  /** A run directory whose agent group is killed after the test if anything survived. */
  runDir(): string;
  /** The scripted fixture agent's command line for these steps. */
  agent(steps: unknown[]): string[];
  /** Creates a run and starts `runner-bridge run` on it in a fresh run directory. */
  startRun(options: StartRunOptions): Promise<StartedRun>;
  /** Starts `runner-bridge attach` on a started run's directory: a successor bridge. */
  attach(started: StartedRun): BridgeProcess;
}

export interface StartRunOptions {
  agent: string[];
  /** Flags after the common ones (e.g. `--adapter codex`). */
  extra?: string[];
  /** The `POST /v1/runs` body. */
  body?: Record<string, unknown>;
  /** The run directory (default: a fresh one from `runDir()`). */
  dir?: string;
  /** The edge URL the bridge dials (default: the edge itself; e.g. a proxy in front of it). */
  edgeUrl?: string;
  /** Extra environment for the bridge process. */
  env?: Record<string, string>;
  /** Another runner-bridge launcher (e.g. a packed copy's). */
  bin?: string;
  /** The bridge's working directory, which is the agent's (default: the repository). */
  cwd?: string;
}

export type StartedRun = CreatedRun & { dir: string; bridge: BridgeProcess };

/** One real `wrangler dev` for the file; per-test cleanup of bridges and agents. */
export function useEdge(): EdgeContext {
  const bridges: BridgeProcess[] = [];
  const dirs: string[] = [];
  const ctx = {
    bridge(args: string[], options?: { env?: Record<string, string>; bin?: string; cwd?: string }) {
      const b = startBridge(args, options);
      bridges.push(b);
      return b;
    },
    runDir() {
      const dir = path.join(tempDir("bridge-run-"), "run");
      dirs.push(dir);
      return dir;
    },
    agent(steps: unknown[]) {
      const file = path.join(tempDir("agent-script-"), "script.json");
      fs.writeFileSync(file, JSON.stringify(steps));
      return [NODE, path.join(FIXTURES, "scripted-agent.mjs"), file];
    },
    async startRun(options: StartRunOptions) {
      const created = await ctx.api.createRun(options.body);
      const dir = options.dir ?? ctx.runDir();
      const args = runArgs({
        edge: options.edgeUrl ?? ctx.edge.url,
        runId: created.run.id,
        token: created.runnerToken,
        dir,
        agent: options.agent,
        ...(options.extra ? { extra: options.extra } : {}),
      });
      const bridge = ctx.bridge(args, {
        ...(options.env ? { env: options.env } : {}),
        ...(options.bin ? { bin: options.bin } : {}),
        ...(options.cwd ? { cwd: options.cwd } : {}),
      });
      return { ...created, dir, bridge };
    },
    attach(started: StartedRun) {
      const { run, runnerToken, dir } = started;
      return ctx.bridge(attachArgs({ edge: ctx.edge.url, runId: run.id, token: runnerToken, dir }));
    },
  } as EdgeContext;
  beforeAll(async () => {
    ctx.edge = await startEdge();
    ctx.api = new Api(ctx.edge.url);
  });
  afterEach(async () => {
    for (const b of bridges.splice(0)) if (b.exitCode() === undefined) await b.kill9();
    for (const dir of dirs.splice(0)) {
      const pgid = readPid(runPaths(dir).agentPid);
      if (pgid !== null && groupAlive(pgid)) {
        signalGroup(pgid, "SIGKILL");
        await waitFor(`leftover agent group ${pgid} to die`, () => !groupAlive(pgid), 5000);
      }
    }
  });
  afterAll(async () => {
    await ctx.edge?.stop();
    removeSandboxedFiles();
  });
  return ctx;
}

/** A marker path inside a fresh temp dir (for pause/resume files). */
export function marker(name: string): string {
  return path.join(tempDir("marker-"), name);
}

export function touch(file: string): void {
  fs.writeFileSync(file, "go");
}
