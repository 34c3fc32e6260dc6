import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import type { RunPaths, RunSpec } from "../rundir.ts";
import type { ExitInfo } from "../sentinel.ts";
import { sandboxExit, sandboxInit, wrapLaunch } from "./bwrap.ts";
import { startAllowProxy } from "./proxy.ts";

export interface AgentProcess {
  child: ChildProcess;
  /** The agent's process group (signals reach the agent and its children, never bwrap): null if it never showed. */
  group: Promise<number | null>;
  /** The agent's exit as the run reports it. */
  exit(code: number | null, signal: NodeJS.Signals | null): ExitInfo;
}

/**
 * Starts the agent of a run as the supervisor's child: directly for `--sandbox none`, inside
 * bwrap (with the allow-list proxy first, for `allow:`) for `--sandbox os`. Either way the agent
 * leads its own process group, whose id is what the bridges signal.
 */
export async function startAgentProcess(spec: RunSpec, paths: RunPaths, stdio: StdioOptions): Promise<AgentProcess> {
  const sandbox = spec.sandbox;
  if (!sandbox) {
    const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: process.env, detached: true, stdio });
    return { child, group: Promise.resolve(child.pid ?? null), exit: (code, signal) => ({ code, signal }) };
  }
  let socket: string | null = null;
  if (sandbox.network.kind === "allow") {
    socket = proxySocketPath(paths);
    await startAllowProxy(socket, sandbox.network.domains, sandbox.edge);
  }
  const launch = wrapLaunch(sandbox, spec.command, spec.args, process.env, socket);
  // bwrap in a group of its own: the agent's group is the sandbox's session, made by --new-session.
  const child = spawn(launch.command, launch.args, { cwd: "/", env: launch.env, detached: true, stdio });
  return {
    child,
    group: child.pid === undefined ? Promise.resolve(null) : findGroup(child),
    exit: (code, signal) => sandboxExit(code, signal),
  };
}

/** bwrap's child (the sandbox's init) appears within moments; it is gone if the sandbox ended first. */
async function findGroup(child: ChildProcess): Promise<number | null> {
  const deadline = Date.now() + 10_000;
  while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
    const init = sandboxInit(child.pid as number);
    if (init !== null) return init;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return null;
}

/** A unix socket path must stay under ~108 bytes; a deep run directory falls back to the temp dir. */
function proxySocketPath(paths: RunPaths): string {
  const own = path.join(paths.dir, "proxy.sock");
  return own.length < 100 ? own : path.join(os.tmpdir(), `runner-bridge-proxy-${process.pid}.sock`);
}
