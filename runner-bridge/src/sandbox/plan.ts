import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sessionPlaces } from "../checkpoint/files.ts";
import { BridgeExit, EXIT } from "../exit.ts";
import { requireSandboxTools } from "./check.ts";
import type { SandboxOptions } from "./policy.ts";
import type { SandboxSpec } from "./spec.ts";

/** Host credential files under a home directory: never visible inside, even in the agent's own HOME. */
export const CREDENTIAL_FILES = [
  ".ssh",
  ".aws",
  ".azure",
  ".config/gh",
  ".config/hub",
  ".config/gcloud",
  ".docker",
  ".kube",
  ".gnupg",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".cargo/credentials",
  ".cargo/credentials.toml",
];

export interface SandboxLaunchContext {
  runId: string;
  /** The bridge's run directory: journal, inbox, control, spec. */
  runDir: string;
  adapter: string;
  /** The agent's environment as the bridge built it (HOME, CODEX_HOME, CLAUDE_CONFIG_DIR, …). */
  agentEnv: Record<string, string>;
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
 * The whole boundary of a `--sandbox os` agent (undefined for `none`); refuses (one line, exit 1)
 * when the sandbox cannot be set up. Called before the run directory is laid out.
 */
export function planSandbox(options: SandboxOptions, ctx: SandboxLaunchContext): SandboxSpec | undefined {
  if (options.mode === "none") return undefined;
  const tools = requireSandboxTools(options.network);
  const home = ctx.agentEnv.HOME;
  if (!home) throw new BridgeExit(EXIT.failure, "--sandbox os: the agent needs a HOME (set HOME for the bridge)");
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const sandbox: SandboxSpec = {
    bwrap: tools.bwrap,
    network: options.network,
    workspace: ctx.cwd,
    home: path.resolve(home),
    writable: sessionWritable(ctx),
    hiddenRoots: (options.hide ?? []).map((p) => path.resolve(p)),
    hidden: hiddenPaths(ctx, home),
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

function hiddenPaths(ctx: SandboxLaunchContext, agentHome: string): string[] {
  const runDir = path.resolve(ctx.runDir);
  // A link is masked where it leads: a mount over the link's own path would follow it anyway.
  const hidden = [runDir, ...(ctx.secretFiles ?? []).map((file) => realPath(file))];
  // The default layout keeps every run under one .runner-bridge directory: all of it is hidden.
  if (path.basename(path.dirname(runDir)) === ".runner-bridge") hidden.push(path.dirname(runDir));
  const homes = new Set([os.userInfo().homedir, process.env.HOME, agentHome].filter((h): h is string => !!h));
  for (const home of homes) for (const file of CREDENTIAL_FILES) hidden.push(path.join(path.resolve(home), file));
  return hidden;
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
