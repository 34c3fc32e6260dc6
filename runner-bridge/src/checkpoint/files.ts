import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sessionIdProblem } from "../adapters/session-id.ts";
import type { Archive, ArchiveFile } from "./archive.ts";

/**
 * Where an agent keeps its own session, as the agent's environment decides it: codex under
 * `$CODEX_HOME` (default ~/.codex), claude-code under `$CLAUDE_CONFIG_DIR/projects` (default
 * ~/.claude/projects), an ndjson agent wherever `--checkpoint PATH` says.
 */
export interface SessionPlaces {
  /** Adapter name: decides the layout. */
  adapter: string;
  codexHome: string;
  claudeConfigDir: string;
  /** The agent's working directory (claude keeps one projects directory per cwd). */
  cwd: string;
  /** ndjson: a file or directory, absolute. */
  checkpointPath?: string;
}

export function sessionPlaces(
  adapter: string,
  agentEnv: Record<string, string | undefined>,
  cwd: string,
  checkpointPath?: string,
): SessionPlaces {
  const home = agentEnv.HOME || os.homedir();
  const places: SessionPlaces = {
    adapter,
    codexHome: path.resolve(agentEnv.CODEX_HOME || path.join(home, ".codex")),
    claudeConfigDir: path.resolve(agentEnv.CLAUDE_CONFIG_DIR || path.join(home, ".claude")),
    cwd,
  };
  if (checkpointPath !== undefined) places.checkpointPath = path.resolve(cwd, checkpointPath);
  return places;
}

/** Claude's projects directory name for a cwd: every character but letters and digits becomes '-'. */
export function claudeProjectSlug(cwd: string): string {
  return cwd.replace(/[^a-zA-Z0-9]/g, "-");
}

export function claudeProjectDir(places: SessionPlaces): string {
  return path.join(places.claudeConfigDir, "projects", claudeProjectSlug(places.cwd));
}

/**
 * The session's files as an archive, or null when the agent has written none yet (nothing to
 * upload). `session` is the native session id the agent reported (codex thread, claude session).
 */
export function collectSession(places: SessionPlaces, provider: string, session: string): Archive | null {
  // The id names files here; one shaped like a path (or a flag) is never looked for.
  if (sessionIdProblem(places.adapter, session)) return null;
  const files = collectFiles(places, session);
  return files.length ? { provider, session, files } : null;
}

function collectFiles(places: SessionPlaces, session: string): ArchiveFile[] {
  if (places.adapter === "codex") {
    // rollout-<time>-<thread id>.jsonl, one per day the thread was written on.
    const sessions = path.join(places.codexHome, "sessions");
    return walk(sessions)
      .filter((file) => path.basename(file).endsWith(`-${session}.jsonl`))
      .map((file) => ({ root: "codex-home", path: relative(places.codexHome, file), data: wholeLines(file) }));
  }
  if (places.adapter === "claude-code") {
    const name = `${session}.jsonl`;
    const own = path.join(claudeProjectDir(places), name);
    const file = fs.existsSync(own) ? own : findClaudeTranscript(places, name);
    return file ? [{ root: "claude-project", path: name, data: wholeLines(file) }] : [];
  }
  const target = places.checkpointPath;
  if (target === undefined || !fs.existsSync(target)) return [];
  if (!fs.statSync(target).isDirectory()) return [{ root: "checkpoint", path: "", data: fs.readFileSync(target) }];
  return walk(target).map((file) => ({
    root: "checkpoint",
    path: relative(target, file),
    data: fs.readFileSync(file),
  }));
}

/** A transcript written under another cwd's projects directory (the agent changed directory). */
function findClaudeTranscript(places: SessionPlaces, name: string): string | null {
  const projects = path.join(places.claudeConfigDir, "projects");
  for (const dir of list(projects)) {
    const file = path.join(projects, dir, name);
    if (fs.existsSync(file)) return file;
  }
  return null;
}

/** A JSON-lines file up to its last newline: a line the agent is still writing is left out. */
function wholeLines(file: string): Buffer {
  const data = fs.readFileSync(file);
  const end = data.lastIndexOf(0x0a);
  return end === data.length - 1 ? data : data.subarray(0, end + 1);
}

function relative(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join("/");
}

function list(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Every regular file under `dir`, sorted; nothing when it does not exist. */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of list(dir)) {
    const full = path.join(dir, name);
    const stat = fs.lstatSync(full, { throwIfNoEntry: false });
    if (stat?.isDirectory()) out.push(...walk(full));
    else if (stat?.isFile()) out.push(full);
  }
  return out;
}
