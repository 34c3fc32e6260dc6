/**
 * Resident memory and CPU time of a server's process tree (Linux /proc): memory for the scale
 * measurements, CPU time for rows that the machine's other load does not skew much.
 */
import fs from "node:fs";

function children(): Map<number, number[]> {
  const byParent = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …: comm may hold spaces, so split after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = byParent.get(ppid) ?? [];
      list.push(Number(entry));
      byParent.set(ppid, list);
    } catch {
      // exited meanwhile
    }
  }
  return byParent;
}

/** Bytes resident in `root` and its descendants whose command name matches `name` (e.g. /workerd/). */
export function treeRss(root: number, name: RegExp): number {
  const byParent = children();
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    stack.push(...(byParent.get(pid) ?? []));
    try {
      const comm = fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      if (!name.test(comm)) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      total += Number(rss ?? 0) * 1024;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds (user + system) used so far by `root` and its descendants named like `name`. */
export function treeCpuMs(root: number, name: RegExp): number {
  const byParent = children();
  let ticks = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    stack.push(...(byParent.get(pid) ?? []));
    try {
      if (!name.test(fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim())) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited meanwhile
    }
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
