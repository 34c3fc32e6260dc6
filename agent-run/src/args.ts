/** Command-line parsing: one spec per command, parsed with node:util parseArgs (strict). */
import { parseArgs as parseNodeArgs } from "node:util";
import type { z } from "zod";
import { usageWords } from "./usage-words.ts";

/** Exit statuses. `watch` maps a run's terminal status onto 0-3. */
export const EXIT = {
  ok: 0,
  failed: 1,
  cancelled: 2,
  timedOut: 3,
  error: 4,
  internal: 70,
  usage: 64,
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const DEFAULT_URL = "http://localhost:8787";
export const DEFAULT_GIVE_UP_MS = 300_000;
export const DEFAULT_CHECK_MS = 30_000;

/** Bad flags or arguments: usage is printed and the CLI exits 64. */
export class UsageError extends Error {
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
}

interface CommandSpec {
  args: string[];
  synopsis: string;
  summary: string;
  options: Record<string, OptionSpec>;
}

const str: OptionSpec = { type: "string" };
const bool: OptionSpec = { type: "boolean" };
const json = { json: bool };

export const COMMANDS = {
  create: {
    args: [],
    synopsis:
      "create [--id ID] [--input JSON|@file] [--agent PROFILE [--prompt TEXT] [--queue Q]] [--tag T ...] [--max-tokens N] [--max-cost USD] [--timeout NAME=MS ...] [--json]",
    summary:
      "create a run (with --agent, a pool host serving that profile runs it); prints its id, tokens and console link",
    options: {
      id: str,
      input: str,
      agent: str,
      prompt: str,
      queue: str,
      tag: { type: "string", multiple: true },
      "max-tokens": str,
      "max-cost": str,
      timeout: { type: "string", multiple: true },
      ...json,
    },
  },
  list: {
    args: [],
    synopsis:
      "list [--status S] [--agent NAME] [--tag T ...] [--meta KEY=VALUE ...] [--created-after TIME] [--created-before TIME] [--limit N] [--all] [--output table|json|ndjson]",
    summary:
      "the tenant's runs, newest first, filtered (every filter must match; --all follows every page; --json is --output ndjson)",
    options: {
      status: str,
      agent: str,
      tag: { type: "string", multiple: true },
      meta: { type: "string", multiple: true },
      "created-after": str,
      "created-before": str,
      limit: str,
      all: bool,
      output: str,
      ...json,
    },
  },
  get: { args: ["ID"], synopsis: "get ID [--json]", summary: "the run record", options: json },
  events: {
    args: ["ID"],
    synopsis: "events ID [--after N] [--output table|json|ndjson]",
    summary: "the run's event log, every page (--json is --output ndjson)",
    options: { after: str, output: str, ...json },
  },
  logs: {
    args: ["ID"],
    synopsis: "logs ID [-f] [--after N] [--json]",
    summary: "the run's event log; with -f (--follow), the same as watch",
    options: { follow: { type: "boolean", short: "f" }, after: str, "give-up-ms": str, "check-ms": str, ...json },
  },
  watch: {
    args: ["ID"],
    synopsis: "watch ID [--after N] [--json] [--give-up-ms MS] [--check-ms MS]",
    summary: "follow the run live until it ends (exit 0 succeeded, 1 failed, 2 cancelled, 3 timed_out)",
    options: { after: str, "give-up-ms": str, "check-ms": str, ...json },
  },
  send: {
    args: ["ID", "TEXT"],
    synopsis: "send ID TEXT [--command-id C] [--json]",
    summary: "send the agent input",
    options: { "command-id": str, ...json },
  },
  interrupt: {
    args: ["ID"],
    synopsis: "interrupt ID [--command-id C] [--json]",
    summary: "interrupt the agent's current turn",
    options: { "command-id": str, ...json },
  },
  cancel: {
    args: ["ID"],
    synopsis: "cancel ID [--reason R] [--command-id C] [--json]",
    summary: "cancel the run",
    options: { reason: str, "command-id": str, ...json },
  },
  approve: {
    args: ["ID", "REQUEST"],
    synopsis: "approve ID REQUEST [--reason R] [--json]",
    summary: "approve a pending tool call",
    options: { reason: str, ...json },
  },
  deny: {
    args: ["ID", "REQUEST"],
    synopsis: "deny ID REQUEST [--reason R] [--json]",
    summary: "deny a pending tool call",
    options: { reason: str, ...json },
  },
  recover: {
    args: ["ID", "resume|restart|fail"],
    synopsis: "recover ID resume|restart|fail [--command-id C] [--json]",
    summary: "decide how a recovering run (its sandbox lost) goes on",
    options: { "command-id": str, ...json },
  },
  token: {
    args: ["ID"],
    synopsis: "token ID --role viewer|runner [--interact] [--ttl MS] [--json]",
    summary: "mint a token; a viewer token comes with a console share link",
    options: { role: str, interact: bool, ttl: str, ...json },
  },
  delete: { args: ["ID"], synopsis: "delete ID [--json]", summary: "delete a finished run", options: json },
  pools: {
    args: [],
    synopsis: "pools [--output table|json|ndjson]",
    summary: "the connected pool hosts: queue, profiles, slots, runs (--json is --output ndjson)",
    options: { output: str, ...json },
  },
  queues: {
    args: [],
    synopsis: "queues [--output table|json|ndjson]",
    summary: "the queues: depth, running, limit, hosts, free slots (--json is --output ndjson)",
    options: { output: str, ...json },
  },
  queue: {
    args: ["NAME"],
    synopsis: "queue NAME [--max-concurrent N|none] [--json]",
    summary: "one queue; --max-concurrent sets how many of its runs may run at once",
    options: { "max-concurrent": str, ...json },
  },
  webhooks: {
    args: ["list|add|rm|deliveries|ping", "[URL|ID]"],
    synopsis: "webhooks list | add URL --events a,b | rm ID | deliveries ID | ping ID [--json]",
    summary:
      "the tenant's webhook endpoints: register one (its secret shown once), remove, its delivery log, a test ping",
    options: { events: str, ...json },
  },
  completion: {
    args: ["bash|zsh"],
    synopsis: "completion bash|zsh",
    summary: 'a shell completion script: eval "$(agent-run completion bash)" (needs no key)',
    options: {},
  },
} satisfies Record<string, CommandSpec>;
export type CommandName = keyof typeof COMMANDS;

const GLOBAL_OPTIONS: Record<string, OptionSpec> = { url: str, key: str, help: { type: "boolean", short: "h" } };

export const USAGE = `usage: agent-run <command> [options]

commands:
${Object.values(COMMANDS as Record<string, CommandSpec>)
  .map((spec) => `  ${spec.synopsis}\n      ${spec.summary}`)
  .join("\n")}

options for every command:
  --url URL   the control plane (or AGENT_RUN_URL; default ${DEFAULT_URL})
  --key KEY   an API key, or a run token for one run (or AGENT_RUN_KEY)
  --help      this text
  --version   the version of agent-run

exit status: 0 ok (watch: succeeded), 1 failed, 2 cancelled, 3 timed_out (watch only),
             4 an HTTP, network or socket error (one line on stderr), 64 bad usage, 130 interrupted`;

export function commandUsage(command: CommandName): string {
  const spec: CommandSpec = COMMANDS[command];
  return `usage: agent-run ${spec.synopsis} [--url URL] [--key KEY]\n  ${spec.summary}`;
}

export type Values = Record<string, string | boolean | string[] | undefined>;

export type Parsed =
  | { kind: "help"; command?: CommandName }
  | { kind: "version" }
  | { kind: "run"; command: CommandName; args: string[]; values: Values; url: string; key: string | undefined };

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): Parsed {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError("no command given");
  if (name === "--help" || name === "-h") return { kind: "help" };
  if (name === "--version" || name === "-V" || name === "version") return { kind: "version" };
  if (name === "help") {
    const topic = rest[0];
    return topic !== undefined && isCommand(topic) ? { kind: "help", command: topic } : { kind: "help" };
  }
  if (!isCommand(name)) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  const spec: CommandSpec = COMMANDS[name];
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseNodeArgs({
      args: rest,
      options: { ...GLOBAL_OPTIONS, ...spec.options },
      allowPositionals: true,
      strict: true,
    }) as { values: Values; positionals: string[] };
  } catch (err) {
    throw new UsageError((err as Error).message, name);
  }
  if (parsed.values.help === true) return { kind: "help", command: name };
  // An argument in brackets is optional (webhooks list takes no target).
  const required = spec.args.filter((arg) => !arg.startsWith("[")).length;
  if (parsed.positionals.length < required || parsed.positionals.length > spec.args.length) {
    const expected = spec.args.length === 0 ? "no arguments" : spec.args.join(" ");
    throw new UsageError(`${name} takes ${expected}, got ${parsed.positionals.length} argument(s)`, name);
  }
  const url = stringValue(parsed.values, "url") ?? env.AGENT_RUN_URL ?? DEFAULT_URL;
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url ${url} is not an http(s) URL`, name);
  const key = stringValue(parsed.values, "key") ?? (env.AGENT_RUN_KEY || undefined);
  return {
    kind: "run",
    command: name,
    args: parsed.positionals,
    values: parsed.values,
    url: url.replace(/\/+$/, ""),
    key,
  };
}

export function stringValue(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** A whole number within bounds, or a usage error naming the flag. */
export function intValue(values: Values, name: string, command: string, min = 0): number | undefined {
  const text = stringValue(values, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`--${name} needs a whole number${min > 0 ? ` of at least ${min}` : ""}, got ${text}`, command);
  }
  return n;
}

/** A body our own zod schema refused before sending: a usage error naming the flag (usage-words.ts). */
export function invalidUsage(error: z.ZodError, command: string): UsageError {
  return new UsageError(usageWords(error), command);
}
