import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sessionPlaces } from "../checkpoint/files.ts";
import { BridgeExit, EXIT } from "../exit.ts";
import { requireSandboxTools } from "./check.ts";
import { credentialPaths } from "./credentials.ts";
import { hostTmpPlaces } from "./host-tmp.ts";
import type { SandboxOptions } from "./policy.ts";
import type { SandboxSpec } from "./spec.ts";

export interface SandboxLaunchContext {
  runId: string;
  /** The bridge's run directory: journal, inbox, control, spec. */
  runDir: string;
  adapter: string;
  /** The agent's environment as the bridge built it (CODEX_HOME, CLAUDE_CONFIG_DIR, …); HOME is agentHome's. */
  agentEnv: Record<string, string>;
  /** The agent's program (programPath's answer) and its arguments, as the spec records them. */
  command: string;
  args: string[];
  /** The agent's working directory (agentWorkspace). */
  cwd: string;
  /** The edge's base URL, which the agent must not reach unless its host is listed. */
  edge: string;
  /** ndjson: the agent's `--checkpoint` file or directory, absolute. */
  checkpoint?: string;
  /** The bridge's own secret files (its `--token-file`): masked inside like the run directory. */
  secretFiles?: string[];
}

/**
 * A program named by a relative path (`./agent.sh`) is the one next to the bridge, even though
 * the agent starts in its workspace; a bare name is still looked up on PATH.
 */
export function programPath(program: string): string {
  return program.includes("/") && !path.isAbsolute(program) ? path.resolve(program) : program;
}

/** The agent's working directory: --workspace, else a fresh directory per run (os) or the bridge's own (none). */
export function agentWorkspace(options: SandboxOptions, runId: string): string {
  if (options.workspace !== undefined) {
    const dir = path.resolve(options.workspace);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }
  if (options.mode === "none") return process.cwd();
  return fs.mkdtempSync(path.join(os.tmpdir(), `runner-bridge-workspace-${runId}-`));
}

/**
 * A sandboxed agent's HOME (undefined for `none`: the bridge's own): --home, else a directory of
 * the run's own beside its run directory, `<dir>.home`, outside the hidden run directory so it
 * stays on this host after the run like the workspace, and a resume on the same directory finds
 * the session files there. Chosen before a resume restores its checkpoint, so they land in it.
 */
export function agentHome(options: SandboxOptions, runDir: string): string | undefined {
  if (options.mode === "none") return undefined;
  return path.resolve(options.home ?? `${path.resolve(runDir)}.home`);
}

/**
 * The whole boundary of a `--sandbox os` agent (undefined for `none`); refuses (one line, exit 1)
 * when the sandbox cannot be set up. Called before the run directory is laid out.
 */
export function planSandbox(options: SandboxOptions, ctx: SandboxLaunchContext): SandboxSpec | undefined {
  if (options.mode === "none") return undefined;
  const tools = requireSandboxTools(options.network);
  const home = ctx.agentEnv.HOME;
  if (!home) throw new BridgeExit(EXIT.failure, "--sandbox os: the agent needs a HOME (--home DIR)");
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const writable = sessionWritable(ctx);
  const sandbox: SandboxSpec = {
    bwrap: tools.bwrap,
    network: options.network,
    workspace: ctx.cwd,
    home: path.resolve(home),
    writable,
    readable: hostTmpPlaces(ctx.command, ctx.args, ctx.agentEnv.PATH, ctx.cwd),
    hiddenRoots: [...(options.hide ?? []), ...runsRoot(ctx.runDir)].map((p) => path.resolve(p)),
    hidden: hiddenPaths(ctx, home, [ctx.cwd, home, ...writable]),
  };
  if (tools.socat) sandbox.socat = tools.socat;
  const edge = new URL(ctx.edge);
  const port = Number(edge.port || (edge.protocol === "https:" || edge.protocol === "wss:" ? 443 : 80));
  if (options.network.kind === "allow") sandbox.edge = { host: edge.hostname.replace(/^\[|\]$/g, ""), port };
  return sandbox;
}

/** Where the agent keeps its session outside HOME and the workspace, made to exist so it can be bound. */
function sessionWritable(ctx: SandboxLaunchContext): string[] {
  const places = sessionPlaces(ctx.adapter, ctx.agentEnv, ctx.cwd, ctx.checkpoint);
  const out: string[] = [];
  if (ctx.adapter === "codex") out.push(places.codexHome);
  if (ctx.adapter === "claude-code") out.push(places.claudeConfigDir);
  for (const dir of out) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (places.checkpointPath !== undefined) {
    const target = places.checkpointPath;
    out.push(fs.existsSync(target) ? target : path.dirname(target));
  }
  return out;
}

/**
 * The default layout keeps every run under one .runner-bridge directory: all of it is hidden but
 * the agent's own HOME there (`<run>.home`), which is bound into it.
 */
function runsRoot(runDir: string): string[] {
  const parent = path.dirname(path.resolve(runDir));
  return path.basename(parent) === ".runner-bridge" ? [parent] : [];
}

function hiddenPaths(ctx: SandboxLaunchContext, agentHome: string, writable: string[]): string[] {
  // A link is masked where it leads: a mount over the link's own path would follow it anyway.
  const hidden = [path.resolve(ctx.runDir), ...(ctx.secretFiles ?? []).map((file) => realPath(file))];
  const homes = [os.userInfo().homedir, process.env.HOME, agentHome].filter((h): h is string => !!h);
  return [...hidden, ...credentialPaths(homes, writable)];
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
