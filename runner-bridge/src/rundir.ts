import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { SandboxSpec } from "./sandbox/spec.ts";

/** The files a run keeps in its directory. Everything here is deleted once the edge acks the end. */
export interface RunPaths {
  dir: string;
  /** Written first, atomically: what to launch and how to recognise its exit sentinel. */
  spec: string;
  /** The agent's stdout line by line, secrets redacted, written by the supervisor; then its exit sentinel. */
  journal: string;
  /** `<line number> <epoch ms>` per journal line: when the supervisor got it from the agent. */
  times: string;
  /** The agent's stderr. */
  stderr: string;
  /** Envelopes of lines to write to the agent's stdin, fed by the supervisor. */
  inbox: string;
  /** Commands applied as signals (interrupt, cancel), recorded before the signal is sent. */
  control: string;
  /** The agent's pid, which is also its process-group id. */
  agentPid: string;
  supervisorPid: string;
  /** The supervisor's own stderr (spawn failures and the like). */
  supervisorLog: string;
}

export function runPaths(dir: string): RunPaths {
  const abs = path.resolve(dir);
  return {
    dir: abs,
    spec: path.join(abs, "spec.json"),
    journal: path.join(abs, "journal.ndjson"),
    times: path.join(abs, "journal.times"),
    stderr: path.join(abs, "stderr.log"),
    inbox: path.join(abs, "inbox.ndjson"),
    control: path.join(abs, "control.ndjson"),
    agentPid: path.join(abs, "agent.pid"),
    supervisorPid: path.join(abs, "supervisor.pid"),
    supervisorLog: path.join(abs, "supervisor.log"),
  };
}

export function defaultRunDir(runId: string): string {
  return path.join(".runner-bridge", runId);
}

export interface RunSpec {
  version: 1;
  runId: string;
  adapter: string;
  command: string;
  args: string[];
  cwd: string;
  /** Names only; values travel in the supervisor's environment and are never written down. */
  envNames: string[];
  /** Per-run secret that marks the supervisor's exit sentinel (an agent printing `{"__exit":0}` is just data). */
  nonce: string;
  createdAt: string;
  /** Adapter options (e.g. the first prompt for codex / claude-code). */
  prompt?: string;
  /**
   * The agent generation this directory serves, named in every `hello` (set by `resume`; absent:
   * whichever generation the edge says is current).
   */
  generation?: number;
  /** A resumed generation: the provider's native session the agent continues. */
  resume?: { provider: string; id: string };
  /** ndjson: the agent's own checkpoint file or directory (`--checkpoint`), absolute. */
  checkpoint?: string;
  /** `--sandbox os`: the agent's boundary, which the supervisor builds around it. */
  sandbox?: SandboxSpec;
}

export function newNonce(): string {
  return randomUUID();
}

/** Writes a file atomically (temp + rename) with owner-only permissions. */
export function writeFileAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

export function readSpec(paths: RunPaths): RunSpec | null {
  let text: string;
  try {
    text = fs.readFileSync(paths.spec, "utf8");
  } catch {
    return null;
  }
  const spec = JSON.parse(text) as RunSpec;
  if (spec.version !== 1 || typeof spec.nonce !== "string") throw new Error(`unreadable run spec ${paths.spec}`);
  return spec;
}

/** A journal exists once both the spec and the journal file are in place. */
export function journalExists(paths: RunPaths): boolean {
  return fs.existsSync(paths.spec) && fs.existsSync(paths.journal);
}

export function readPid(file: string): number | null {
  try {
    const n = Number.parseInt(fs.readFileSync(file, "utf8").trim(), 10);
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** Deletes every run file and the directory itself when it is left empty. */
export function removeRunFiles(paths: RunPaths): void {
  for (const f of [
    paths.journal,
    paths.times,
    paths.stderr,
    paths.inbox,
    paths.control,
    paths.agentPid,
    paths.supervisorPid,
    paths.supervisorLog,
    path.join(paths.dir, "proxy.sock"),
    `${paths.inbox}.lock`,
    `${paths.control}.lock`,
    paths.spec,
  ]) {
    fs.rmSync(f, { force: true });
  }
  try {
    fs.rmdirSync(paths.dir);
  } catch {
    // not empty (foreign files) or already gone: leave it
  }
}

/** The last `bytes` of a file as text (for the error of a failed agent). */
export function readTail(file: string, bytes: number): string {
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch {
    return "";
  }
  try {
    const size = fs.fstatSync(fd).size;
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    fs.readSync(fd, buf, 0, buf.length, start);
    // Drop a torn leading UTF-8 sequence.
    let text = buf.toString("utf8");
    if (start > 0) text = text.replace(/^\uFFFD+/, "");
    return text;
  } finally {
    fs.closeSync(fd);
  }
}
