import { pollUntil } from "./poll.ts";
import fs from "node:fs";

/**
 * Process-group helpers. A group counts as alive while it has a member that is not a zombie
 * (orphaned grandchildren may sit unreaped when pid 1 does not reap).
 */
export function groupAlive(pgid: number): boolean {
  if (process.platform === "linux") return liveMembers(pgid).length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of the non-zombie members of a process group (Linux, from /proc). */
export function liveMembers(pgid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const state = fields[0];
    const pgrp = Number(fields[2]);
    if (pgrp === pgid && state !== "Z" && state !== "X") out.push(Number(name));
  }
  return out;
}

/** True when the process exists and is not a zombie. */
export function processAlive(pid: number): boolean {
  if (process.platform === "linux") {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      return state !== "Z" && state !== "X";
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM to the whole group, SIGKILL after `graceMs` if anything is left; resolves once no
 * member is alive (or throws after a further bounded wait, naming the survivors).
 */
export async function terminateGroup(pgid: number, graceMs: number, alreadyTermed = false): Promise<void> {
  if (!groupAlive(pgid)) return;
  if (!alreadyTermed) signalGroup(pgid, "SIGTERM");
  if (await pollUntil(() => !groupAlive(pgid), graceMs)) return;
  signalGroup(pgid, "SIGKILL");
  if (await pollUntil(() => !groupAlive(pgid), 5000)) return;
  throw new Error(`process group ${pgid} still has live members after SIGKILL: ${liveMembers(pgid).join(", ")}`);
}
