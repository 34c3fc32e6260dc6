/**
 * What the sandbox of one agent is: whether there is one, what the agent may reach on the
 * network, and where it works. Parsed from `--sandbox`, `--network`, `--workspace`, `--home` and
 * `--hide` (or from a pool's agent profile); the bridge turns it into a SandboxSpec at launch (see plan.ts).
 */
export type SandboxMode = "none" | "os";

/** `none`: no network at all; `allow`: only these domains, through the bridge's proxy; `host`: the host's network. */
export type NetworkPolicy = { kind: "none" } | { kind: "host" } | { kind: "allow"; domains: string[] };

export interface SandboxOptions {
  mode: SandboxMode;
  network: NetworkPolicy;
  /** The agent's working directory, read-write inside; absent: a fresh directory per run (os) or the bridge's cwd (none). */
  workspace?: string;
  /** Directories the agent must not see, but for its own workspace and HOME in them (a pool's root of runs). */
  hide?: string[];
  /** os: the agent's HOME, read-write inside; absent: a directory of the run's own beside its run directory. */
  home?: string;
}

export const SANDBOX_MODES: readonly SandboxMode[] = ["none", "os"];

/** `--sandbox`: one of the modes, or an error message. */
export function parseSandboxMode(text: string): SandboxMode | string {
  return (SANDBOX_MODES as readonly string[]).includes(text)
    ? (text as SandboxMode)
    : `--sandbox ${text}: expected none or os`;
}

/** The sandbox fields of a command line or an agent profile, as given. */
export interface SandboxFields {
  sandbox?: string;
  network?: string;
  workspace?: string;
  hide?: string[];
  home?: string;
}

/**
 * The options those fields mean (or an error message): `defaultMode` when `sandbox` is absent
 * (`none` for run and resume, `os` for pools); network `none` inside a sandbox unless given.
 * Without a sandbox the agent has the host's network, so a narrower `network` is refused.
 */
export function sandboxOptions(fields: SandboxFields, defaultMode: SandboxMode): SandboxOptions | string {
  const mode = parseSandboxMode(fields.sandbox ?? defaultMode);
  if (mode !== "none" && mode !== "os") return mode;
  const raw = fields.network ?? (mode === "os" ? "none" : "host");
  const network = parseNetwork(raw);
  if (typeof network === "string") return network;
  if (mode === "none" && network.kind !== "host")
    return `--network ${raw} needs --sandbox os (without a sandbox the agent has the host's network)`;
  const options: SandboxOptions = { mode, network };
  if (fields.workspace !== undefined) options.workspace = fields.workspace;
  if (fields.home !== undefined) {
    if (mode === "none") return "--home needs --sandbox os (without a sandbox the agent has the bridge's HOME)";
    if (fields.home === "") return "--home needs a directory";
    options.home = fields.home;
  }
  if (fields.hide?.length) {
    if (mode === "none") return "--hide needs --sandbox os";
    options.hide = fields.hide;
  }
  return options;
}

/** A host name as an allow-list entry: letters, digits, dots and hyphens; `*.` allows every subdomain. */
const DOMAIN = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** `--network none | host | allow:<domain,...>`: the policy, or an error message. */
export function parseNetwork(text: string): NetworkPolicy | string {
  if (text === "none") return { kind: "none" };
  if (text === "host") return { kind: "host" };
  if (text.startsWith("allow:")) {
    const domains = text
      .slice("allow:".length)
      .split(",")
      .map((d) => d.trim().toLowerCase())
      .filter((d) => d !== "");
    if (domains.length === 0) return "--network allow: needs at least one domain (allow:api.openai.com,...)";
    const bad = domains.find((d) => !DOMAIN.test(d));
    if (bad !== undefined) return `--network allow: ${bad} is not a domain name`;
    return { kind: "allow", domains: [...new Set(domains)] };
  }
  return `--network ${text}: expected none, host or allow:<domain,...>`;
}

/** The policy as the flag spells it (logs, docs, profiles). */
export function formatNetwork(policy: NetworkPolicy): string {
  return policy.kind === "allow" ? `allow:${policy.domains.join(",")}` : policy.kind;
}

/** True when `host` (a name or address from a CONNECT line) is on the allow-list. */
export function domainAllowed(domains: readonly string[], host: string): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  return domains.some((d) => (d.startsWith("*.") ? name.endsWith(d.slice(1)) : name === d));
}

/** The `run`/`resume` flags that give a child bridge these options (how a pool passes a profile's sandbox). */
export function sandboxArgv(options: SandboxOptions): string[] {
  const argv = ["--sandbox", options.mode];
  if (options.mode === "os") argv.push("--network", formatNetwork(options.network));
  if (options.workspace !== undefined) argv.push("--workspace", options.workspace);
  if (options.home !== undefined) argv.push("--home", options.home);
  for (const dir of options.hide ?? []) argv.push("--hide", dir);
  return argv;
}
