import fs from "node:fs";
import os from "node:os";
import { PROXY_PORT, PROXY_SOCKET_INSIDE, type SandboxSpec } from "./spec.ts";

/** Root-owned secrets of the host that stay readable to uid 0 even without capabilities: masked. */
const SYSTEM_SECRETS = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"];

function systemSecrets(): string[] {
  let hostKeys: string[] = [];
  try {
    hostKeys = fs.readdirSync("/etc/ssh").filter((name) => /^ssh_host_.*_key$/.test(name));
  } catch {
    // no ssh server here
  }
  return [...SYSTEM_SECRETS, ...hostKeys.map((name) => `/etc/ssh/${name}`)];
}

export interface WrappedLaunch {
  command: string;
  args: string[];
  /** The agent's environment with the sandbox's additions (proxy variables, a private TMPDIR). */
  env: Record<string, string | undefined>;
}

/**
 * The bwrap command line that runs `command args` inside the run's sandbox. Mount order is the
 * boundary: everything read-only, private /tmp /dev /proc /run, the agent's own places of the host's
 * /tmp read-only again, hidden roots, then the read-write
 * places (which may lie in a hidden root), then the masks, so the run directory and credential
 * files stay hidden even inside a read-write place.
 * Secrets never go on this command line: the agent's variables travel in the environment.
 */
export function wrapLaunch(
  sandbox: SandboxSpec,
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  proxySocket: string | null,
): WrappedLaunch {
  const net = sandbox.network.kind === "host" ? [] : ["--unshare-net"];
  const bwrap = [
    "--die-with-parent", // the supervisor gone: nothing of the sandbox is left
    "--new-session", // the sandbox's own session and process group, apart from bwrap itself
    "--cap-drop", // run as root, bwrap would keep every capability (remount / read-write, say)
    "ALL",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...net,
    ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...procCovers()],
    ...["--tmpfs", "/tmp", "--tmpfs", "/run"],
    ...resolverMounts(sandbox),
    ...(sandbox.readable ?? []).flatMap((place) => ["--ro-bind", place, place]),
    ...hideRoots(sandbox.hiddenRoots),
    ...binds(sandbox),
    ...masks([...sandbox.hidden, ...systemSecrets()]),
    ...readOnlyRoots(sandbox.hiddenRoots),
    ...(proxySocket ? ["--bind", proxySocket, PROXY_SOCKET_INSIDE] : []),
    ...["--chdir", sandbox.workspace],
    "--",
  ];
  const inner = proxySocket && sandbox.socat ? withProxyForwarder(sandbox.socat, command, args) : [command, ...args];
  return { command: sandbox.bwrap, args: [...bwrap, ...inner], env: sandboxEnv(sandbox, env, proxySocket !== null) };
}

/**
 * The sandbox's procfs still writes the host's sysctls, and uid 0 needs no capability for most of
 * them (kernel.core_pattern runs a program as the host's root): read-only, like sysrq and irq.
 */
function procCovers(): string[] {
  const out: string[] = [];
  for (const name of ["sys", "sysrq-trigger", "irq", "bus"]) {
    const target = `/proc/${name}`;
    if (fs.existsSync(target)) out.push("--ro-bind", target, target);
  }
  return out;
}

function binds(sandbox: SandboxSpec): string[] {
  const out: string[] = [];
  for (const dir of new Set([sandbox.workspace, sandbox.home, ...sandbox.writable])) {
    if (fs.existsSync(dir)) out.push("--bind", dir, dir);
  }
  return out;
}

/**
 * A hidden root becomes an empty tmpfs, writable for now: the read-write places inside it (a
 * pool's run workspace) are bound onto mount points bwrap has to create there first.
 */
function hideRoots(paths: string[]): string[] {
  return [...new Set(paths)]
    .filter((dir) => fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    .flatMap((dir) => ["--tmpfs", dir]);
}

/** Then read-only, after the binds and masks inside it: the places bound into it stay read-write (mounts of their own). */
function readOnlyRoots(paths: string[]): string[] {
  return [...new Set(paths)]
    .filter((dir) => fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    .flatMap((dir) => ["--remount-ro", dir]);
}

/** Directories become an empty read-only tmpfs, files an empty read-only file. */
function masks(paths: string[]): string[] {
  const out: string[] = [];
  for (const target of new Set(paths)) {
    const stat = fs.statSync(target, { throwIfNoEntry: false });
    if (stat?.isDirectory()) out.push("--tmpfs", target, "--remount-ro", target);
    else if (stat) out.push("--ro-bind", "/dev/null", target);
  }
  return out;
}

/** With the host's network the agent needs the host's resolver, which may live under /run. */
function resolverMounts(sandbox: SandboxSpec): string[] {
  if (sandbox.network.kind !== "host") return [];
  const resolved = "/run/systemd/resolve";
  return fs.existsSync(resolved) ? ["--ro-bind", resolved, resolved] : [];
}

/**
 * allow: socat turns the sandbox's loopback port into the proxy's socket; it runs in its own
 * session so the agent's interrupts do not reach it, and the agent starts once it listens.
 */
function withProxyForwarder(socat: string, command: string, args: string[]): string[] {
  const port = PROXY_PORT.toString(16).toUpperCase().padStart(4, "0");
  // The helpers are found on the usual system paths even if the agent's PATH leaves them out.
  const tools = 'PATH="$PATH:/usr/bin:/bin"';
  const script = [
    `${tools} setsid ${socat} TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${PROXY_SOCKET_INSIDE} </dev/null >/dev/null 2>&1 &`,
    `i=0; while ! ${tools} grep -q ':${port} 00000000:0000 0A' /proc/net/tcp && [ $i -lt 500 ]; do ${tools} sleep 0.01; i=$((i+1)); done`,
    'exec "$@"',
  ].join("\n");
  return ["/bin/sh", "-c", script, "runner-bridge-sandbox", command, ...args];
}

function sandboxEnv(
  sandbox: SandboxSpec,
  env: Record<string, string | undefined>,
  proxied: boolean,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env, HOME: sandbox.home, TMPDIR: "/tmp" };
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"]) {
    delete out[name];
    delete out[name.toLowerCase()];
  }
  if (proxied) {
    const url = `http://127.0.0.1:${PROXY_PORT}`;
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) out[name] = url;
  }
  return out;
}

/** bwrap reports an agent killed by signal N as exit status 128+N; the run reports the signal. */
export function sandboxExit(
  code: number | null,
  signal: NodeJS.Signals | null,
): { code: number | null; signal: NodeJS.Signals | null } {
  if (code === null || code <= 128) return { code, signal };
  const name = Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0];
  return name ? { code: null, signal: name as NodeJS.Signals } : { code, signal };
}

/** The sandbox's init as the host sees it: bwrap's one child. Its pid is the agent's process group. */
export function sandboxInit(bwrapPid: number): number | null {
  try {
    const first = fs.readFileSync(`/proc/${bwrapPid}/task/${bwrapPid}/children`, "utf8").trim().split(" ")[0];
    const pid = Number(first);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return childByParent(bwrapPid); // a kernel without CONFIG_PROC_CHILDREN
  }
}

function childByParent(parent: number): number | null {
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid ...; comm may contain spaces and parentheses.
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent) return Number(name);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}
