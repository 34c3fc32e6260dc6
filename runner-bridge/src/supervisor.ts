/**
 * The supervisor: a small detached process that owns the agent for the whole run, so the agent
 * outlives any number of bridges.
 *
 *   node supervisor.ts <run-dir> [--secrets-fd=3]
 *
 * - starts the agent in its own process group, stderr appended to stderr.log, and journals its
 *   stdout itself, line by line (journal-writer.ts): the values of the `--env` variables and the
 *   runner token redacted, each line's time in journal.times. Nothing passes through a bridge, so
 *   a bridge killed at any moment tears or loses no line;
 * - feeds inbox.ndjson into the agent's stdin, envelope by envelope, as it grows;
 * - when the agent exits, terminates a torn last line and appends the exit sentinel (exit code or
 *   signal, plus the run's nonce).
 * Its environment is exactly the agent's environment (the bridge built it). Secrets beyond it (the
 * runner token) arrive as a JSON array on fd 3, read once and closed before the agent starts, so
 * they are in no argv, environment or file.
 */
import fs from "node:fs";
import { JournalWriter } from "./journal-writer.ts";
import { secretForms } from "./redact.ts";
import { readSpec, runPaths, writeFileAtomic } from "./rundir.ts";
import { startAgentProcess } from "./sandbox/agent-process.ts";
import { type ExitInfo, formatSentinel } from "./sentinel.ts";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("supervisor: usage: supervisor.ts <run-dir>\n");
  process.exit(1);
}
const paths = runPaths(dir);
const spec = readSpec(paths);
if (!spec) {
  process.stderr.write(`supervisor: no run spec in ${paths.dir}\n`);
  process.exit(1);
}
const nonce = spec.nonce;
// The supervisor lives in its own session; hang-ups and terminal signals are not its business.
process.on("SIGHUP", () => {});
process.on("SIGINT", () => {});
writeFileAtomic(paths.supervisorPid, `${process.pid}\n`);

const journalFd = fs.openSync(paths.journal, "a", 0o600);
const timesFd = fs.openSync(paths.times, "a", 0o600);
const stderrFd = fs.openSync(paths.stderr, "a", 0o600);
const envSecrets = spec.envNames.flatMap((name) => process.env[name] ?? []);
const journal = new JournalWriter(journalFd, timesFd, secretForms([...envSecrets, ...secretsFromFd3()]));

/** The extra secrets the bridge wrote to fd 3 (`--secrets-fd=3`; without it fd 3 is not ours). */
function secretsFromFd3(): string[] {
  if (process.argv[3] !== "--secrets-fd=3") return [];
  const text = fs.readFileSync(3, "utf8");
  fs.closeSync(3); // the agent must not inherit it
  const values = JSON.parse(text || "[]") as unknown;
  return Array.isArray(values) ? values.filter((v): v is string => typeof v === "string") : [];
}

/** How long the agent's stdout may stay open after it exited (a lingering grandchild holds it). */
const DRAIN_MS = 1000;
let finished = false;
function finish(exit: ExitInfo): void {
  if (finished) return;
  finished = true;
  clearInterval(feedTimer);
  try {
    journal.end();
    fs.writeSync(journalFd, `${formatSentinel(nonce, exit)}\n`);
  } finally {
    process.exit(0);
  }
}

// Own process group (in --sandbox os: the sandbox's session): cancel signals the whole tree, never the supervisor.
const agent = await startAgentProcess(spec, paths, ["pipe", "pipe", stderrFd]);
const child = agent.child;
let stdoutEnded = false;
child.stdout?.on("data", (chunk: Buffer) => {
  if (!finished) journal.write(chunk);
});
child.stdout?.on("end", () => {
  stdoutEnded = true;
});
child.on("error", (err) => {
  fs.writeSync(stderrFd, `runner-bridge supervisor: could not start ${spec.command}: ${err.message}\n`);
  finish({ code: 127, signal: null, spawnError: err.message });
});
void agent.group.then((pgid) => {
  if (pgid !== null && !finished) writeFileAtomic(paths.agentPid, `${pgid}\n`);
});
child.on("exit", (code, signal) => {
  // Everything the agent wrote before it exited is in the pipe: read it all, then the sentinel.
  const exit = agent.exit(code, signal);
  if (stdoutEnded) return finish(exit);
  child.stdout?.once("end", () => finish(exit));
  setTimeout(() => finish(exit), DRAIN_MS);
});
child.stdin?.on("error", () => {
  // the agent closed its stdin or exited; nothing to deliver any more
});

// Inbox feeder: forward each complete envelope line exactly once, in order. Lines are cut at
// newline bytes and decoded whole, so a character split across two reads arrives intact.
let offset = 0;
let partial: Buffer = Buffer.alloc(0);
let stdinClosed = false;
function feed(): void {
  let fd: number;
  try {
    fd = fs.openSync(paths.inbox, "r");
  } catch {
    return;
  }
  try {
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, offset);
      if (n <= 0) break;
      offset += n;
      partial = Buffer.concat([partial, buf.subarray(0, n)]);
    }
  } finally {
    fs.closeSync(fd);
  }
  let start = 0;
  for (let nl = partial.indexOf(0x0a); nl >= 0; nl = partial.indexOf(0x0a, start)) {
    deliver(partial.toString("utf8", start, nl));
    start = nl + 1;
  }
  partial = Buffer.from(partial.subarray(start));
}
function deliver(envelopeLine: string): void {
  if (stdinClosed || !child.stdin) return;
  let envelope: { line?: unknown; close?: unknown };
  try {
    envelope = JSON.parse(envelopeLine) as typeof envelope;
  } catch {
    return; // a torn write from a crashed bridge; the bridge terminated it with a newline
  }
  if (typeof envelope.line === "string") child.stdin.write(`${envelope.line}\n`);
  if (envelope.close === true) {
    stdinClosed = true;
    child.stdin.end();
  }
}
const feedTimer = setInterval(feed, 20);
feed();
