/**
 * The server side of the storm, read from Linux /proc: which process is `npm run serve` (to send
 * it the deploy, SIGUSR2) and which is its workerd (restarted by it, so found again after), their
 * CPU, memory and open descriptors, the kernel's listen-queue counters, and the open-files limit
 * the bench gives the processes it starts.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";

const TICKS_PER_SECOND = 100;

function statFields(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // pid (comm) state ppid …: comm may hold spaces, so split after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

function childrenOf(parent: number): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    if (Number(statFields(Number(entry))?.[1]) === parent) found.push(Number(entry));
  }
  return found;
}

function cmdline(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
}

/** This process's child running `node serve/main.ts --port <port>` (the bench's serve target). */
export function findServe(url: string): number {
  const port = new URL(url).port;
  for (const pid of childrenOf(process.pid)) {
    const args = cmdline(pid);
    const at = args.indexOf("--port");
    if (args.some((a) => a.endsWith("serve/main.ts")) && args[at + 1] === port) return pid;
  }
  throw new Error(`no serve/main.ts --port ${port} among the bench's children`);
}

/** CPU ms (user + system) of `pid` so far, or null once it has exited. */
function cpuMs(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND : null;
}

function rssBytes(pid: number): number {
  try {
    const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return Number(rss ?? 0) * 1024;
  } catch {
    return 0;
  }
}

export function openFiles(pid: number): number {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

export interface ServerSample {
  /** CPU ms used since the previous sample, by every workerd serve has run. */
  cpuMs: number;
  /** Ms its main thread spent runnable but waiting for a CPU since the previous sample. */
  waitMs: number;
  rss: number;
}

/** Ms `pid`'s main thread has waited on a run queue so far (/proc/<pid>/schedstat), or null once gone. */
export function runQueueWaitMs(pid: number | "self"): number | null {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1]) / 1e6;
  } catch {
    return null;
  }
}

/** workerd under `servePid`, whichever it is now; each workerd's CPU counted from its own start. */
export class ServerWatch {
  private workerd = 0;
  private seen = new Map<number, { cpu: number; wait: number }>();
  private readonly servePid: number;

  constructor(servePid: number) {
    this.servePid = servePid;
    this.find();
  }

  private find(): number {
    if (this.workerd && statFields(this.workerd)) return this.workerd;
    this.workerd = childrenOf(this.servePid).find((pid) => cmdline(pid)[0]?.endsWith("/workerd")) ?? 0;
    return this.workerd;
  }

  pid(): number {
    return this.find();
  }

  sample(): ServerSample {
    const pid = this.find();
    const cpu = pid ? cpuMs(pid) : null;
    const wait = pid ? runQueueWaitMs(pid) : null;
    if (!pid || cpu === null || wait === null) return { cpuMs: 0, waitMs: 0, rss: 0 };
    const before = this.seen.get(pid) ?? { cpu: 0, wait: 0 };
    this.seen.set(pid, { cpu, wait });
    return { cpuMs: cpu - before.cpu, waitMs: wait - before.wait, rss: rssBytes(pid) };
  }

  /** The deploy: serve kills workerd (every socket drops at once) and starts it again. */
  deploy(): void {
    process.kill(this.servePid, "SIGUSR2");
  }
}

/** TcpExt counters of the listen queue (system-wide): connections dropped because it was full. */
export function listenCounters(): { overflows: number; drops: number } {
  const lines = fs.readFileSync("/proc/net/netstat", "utf8").split("\n");
  const header = lines.find((l) => l.startsWith("TcpExt:"))?.split(" ") ?? [];
  const values = lines.filter((l) => l.startsWith("TcpExt:"))[1]?.split(" ") ?? [];
  const value = (name: string) => Number(values[header.indexOf(name)] ?? 0);
  return { overflows: value("ListenOverflows"), drops: value("ListenDrops") };
}

export function openFilesLimit(pid: number): { soft: number; hard: number } {
  const line = fs
    .readFileSync(`/proc/${pid}/limits`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("Max open files"));
  const [soft, hard] = (line ?? "").replace("Max open files", "").trim().split(/\s+/);
  const parse = (v: string | undefined) => (v === "unlimited" ? Number.POSITIVE_INFINITY : Number(v));
  return { soft: parse(soft), hard: parse(hard) };
}

/**
 * workerd's descriptors (counted in /proc/<pid>/fd, docs/SCALE.md): two per accepted connection
 * (accept4, then fcntl F_DUPFD_CLOEXEC, in workerd itself), three per object open on SQLite (the
 * database, its -wal and -shm), and a reserve for the rest (listeners, object metadata, tenant
 * index shards, setup's HTTP connections).
 */
export const FDS_PER_CONNECTION = 2;
export const FDS_PER_OBJECT = 3;
const FDS_RESERVED = 500;

/** Descriptors a workerd needs for `sockets` WebSockets, one object (run) per `socketsPerRun`. */
export function descriptorsFor(sockets: number, socketsPerRun: number): number {
  return FDS_PER_CONNECTION * sockets + Math.ceil(sockets / socketsPerRun) * FDS_PER_OBJECT + FDS_RESERVED;
}

/**
 * How many `npm run serve` processes the storm needs so that none passes `limit` descriptors (a
 * tenth kept free): one, unless one workerd cannot hold every socket under this machine's limit.
 */
export function serversFor(
  sockets: number,
  socketsPerRun: number,
  limit: number,
): { servers: number; perServer: number } {
  const perSocket = FDS_PER_CONNECTION + FDS_PER_OBJECT / socketsPerRun;
  const perServer = Math.max(1, Math.floor((limit * 0.9 - FDS_RESERVED) / perSocket));
  return { servers: Math.ceil(sockets / perServer), perServer };
}

/**
 * Raises this process's open-files limit to `wanted` (soft and hard) with prlimit(1), before the
 * storm's server starts: serve and its workerd inherit it. Raising the hard limit needs root (or
 * CAP_SYS_RESOURCE); without it the soft limit goes up to the hard one. Says what it got.
 */
export function raiseOpenFiles(wanted: number): string {
  const before = openFilesLimit(process.pid);
  if (before.soft >= wanted) return `open files: ${before.soft} (enough)`;
  const ceiling = Number(fs.readFileSync("/proc/sys/fs/nr_open", "utf8"));
  const goal = Math.min(wanted, ceiling);
  const set = (soft: number, hard: number) =>
    execFileSync("prlimit", ["--pid", String(process.pid), `--nofile=${soft}:${hard}`], { stdio: "pipe" });
  try {
    set(goal, Math.max(goal, before.hard));
  } catch (error) {
    try {
      set(Math.min(goal, before.hard), before.hard);
    } catch {
      // prlimit missing or refused: what we have stands, and the line below says so.
    }
    const after = openFilesLimit(process.pid);
    return `open files: ${before.soft} → ${after.soft} of ${goal} wanted (${(error as Error).message.split("\n")[0]})`;
  }
  return `open files: ${before.soft} → ${openFilesLimit(process.pid).soft} (prlimit on the bench; serve and workerd inherit it)`;
}
