import fs from "node:fs";
import path from "node:path";
import { type ParseArgsOptionsConfig, parseArgs as parseFlags } from "node:util";
import { fail, ok, type Result } from "../../src/protocol/index.ts";
import { DEFAULT_LINGER_MS } from "./outbox.ts";
import { POOL_USAGE } from "./pool/args.ts";
import { type SandboxFields, type SandboxOptions, sandboxOptions } from "./sandbox/policy.ts";

/** Command-line parsing for `run`, `attach` and `resume` (flags as documented in docs/RUNNER-BRIDGE.md). */
export interface CommonArgs {
  edge: string;
  runId: string;
  token: string;
  /** `--token-file`, absolute: hidden from a sandboxed agent like the run directory. */
  tokenFile?: string;
  dir?: string;
  graceMs: number;
  giveUpMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** How often the session files are looked at for a new checkpoint. */
  checkpointIntervalMs: number;
  /** How long a frame that is not full waits for more events before it goes (0: at the next pump tick). */
  lingerMs: number;
  quiet: boolean;
}

export interface RunArgs extends CommonArgs {
  command: "run";
  adapter: string;
  envNames: string[];
  prompt?: string;
  /** ndjson: the agent's own checkpoint file or directory. */
  checkpoint?: string;
  /** `--sandbox`, `--network`, `--workspace`, `--home`, `--hide`: where and how fenced in the agent runs. */
  sandbox: SandboxOptions;
  argv: string[];
}

/** `resume`: like `run` on a fresh sandbox; the adapter defaults to the one of the run's session. */
export interface ResumeArgs extends Omit<RunArgs, "command" | "adapter"> {
  command: "resume";
  adapter?: string;
}

export interface AttachArgs extends CommonArgs {
  command: "attach";
  waitMs: number;
}

export type Args = RunArgs | ResumeArgs | AttachArgs | { command: "help" } | { command: "version" };

/** The package's version, read once from its package.json (printed by `--version`). */
export const VERSION: string = (
  JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

export const USAGE = `usage:
  runner-bridge run    --edge URL --run ID [--token-file PATH] [--dir DIR] [--adapter ndjson|codex|claude-code]
                       [--env NAME ...] [--prompt TEXT] [--checkpoint PATH] [SANDBOX] -- CMD [ARGS...]
  runner-bridge attach --edge URL --run ID [--token-file PATH] [--dir DIR] [--wait-ms MS]
  runner-bridge resume --edge URL --run ID [--token-file PATH] [--dir DIR] [--adapter ndjson|codex|claude-code]
                       [--env NAME ...] [--prompt TEXT] [--checkpoint PATH] [SANDBOX] -- CMD [ARGS...]
    (on a fresh sandbox: restores the run's checkpoint and starts the next generation with the
     provider's resume; only while the run is recovering in mode resume)
SANDBOX: --sandbox none|os (default none; os: bubblewrap, see docs/SANDBOX.md)
         --network none|allow:DOMAIN,...|host (os only; default none) --workspace DIR (default: os a fresh
         directory per run, none the current directory) --home DIR (os only: the agent's HOME; default a
         directory of the run's own, <run dir>.home) --hide DIR ... (os: not visible inside but for the
         workspace and HOME in it; a pool hides its root of runs)
${POOL_USAGE}
common options: --grace-ms MS (SIGTERM→SIGKILL, default 5000), --give-up-ms MS (reconnecting, default 600000),
                --reconnect-min-ms MS (default 250), --reconnect-max-ms MS (default 15000),
                --checkpoint-interval MS (default 60000), --linger-ms MS (hold a frame that is not
                full up to MS for more events: fewer frames from a fast agent; default ${DEFAULT_LINGER_MS}), --quiet
the runner token: RUNNER_BRIDGE_TOKEN, or --token-file PATH (a file holding it, mode 0600);
  --token TOKEN still works but puts the token in the process list.
exit status: 0 run terminal and acknowledged, 2 fenced, 3 unknown run, 4 terminal run, 5 journal timeout,
             6 not resumable (resume: the run is not recovering in mode resume), 64 bad usage, 1 other
runner-bridge --version prints its version.`;

const COMMON = {
  edge: { type: "string" },
  run: { type: "string" },
  token: { type: "string" },
  "token-file": { type: "string" },
  dir: { type: "string" },
  "grace-ms": { type: "string" },
  "give-up-ms": { type: "string" },
  "reconnect-min-ms": { type: "string" },
  "reconnect-max-ms": { type: "string" },
  "checkpoint-interval": { type: "string" },
  "linger-ms": { type: "string" },
  quiet: { type: "boolean" },
} satisfies ParseArgsOptionsConfig;
const RUN: ParseArgsOptionsConfig = {
  ...COMMON,
  adapter: { type: "string" },
  env: { type: "string", multiple: true },
  prompt: { type: "string" },
  checkpoint: { type: "string" },
  sandbox: { type: "string" },
  network: { type: "string" },
  workspace: { type: "string" },
  home: { type: "string" },
  hide: { type: "string", multiple: true },
};
const ATTACH: ParseArgsOptionsConfig = { ...COMMON, "wait-ms": { type: "string" } };

type Flags = { [name: string]: string | boolean | (string | boolean)[] | undefined };

/** Thrown inside this module only; parseArgs turns it into a Failure. */
class UsageProblem extends Error {}

/** Parses the bridge's arguments; a Failure's message says what is wrong (the CLI adds the usage). */
export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): Result<Args> {
  try {
    return ok(parse(argv, env));
  } catch (err) {
    if (err instanceof UsageProblem) return fail("invalid_request", err.message);
    throw err;
  }
}

function parse(argv: string[], env: NodeJS.ProcessEnv): Args {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") return { command: "help" };
  if (command === "--version" || command === "version") return { command: "version" };
  if (command !== "run" && command !== "attach" && command !== "resume")
    throw new UsageProblem(`unknown command ${command}`);
  const { flags, agent } = splitAgentCommand(command, rest);
  const common = commonArgs(flags, env);
  if (command === "attach") {
    if (agent.length) throw new UsageProblem("attach takes no agent command");
    return { ...common, command, waitMs: integer(flags, "wait-ms", 10_000) };
  }
  if (agent.length === 0) throw new UsageProblem(`${command} needs the agent's command after --`);
  const envNames = (flags.env as string[] | undefined) ?? [];
  const badName = envNames.find((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
  if (badName !== undefined) throw new UsageProblem(`--env ${badName} is not a variable name`);
  const launch: Omit<ResumeArgs, "command"> = { ...common, envNames, sandbox: sandboxFlags(flags), argv: agent };
  if (typeof flags.prompt === "string") launch.prompt = flags.prompt;
  if (typeof flags.checkpoint === "string") launch.checkpoint = flags.checkpoint;
  const adapter = flags.adapter as string | undefined;
  if (command === "resume") return adapter === undefined ? { ...launch, command } : { ...launch, command, adapter };
  return { ...launch, command, adapter: adapter ?? "ndjson" };
}

function sandboxFlags(flags: Flags): SandboxOptions {
  const fields: SandboxFields = {};
  for (const name of ["sandbox", "network", "workspace", "home"] as const) {
    const value = flags[name];
    if (typeof value === "string") fields[name] = value;
  }
  if (Array.isArray(flags.hide)) fields.hide = flags.hide as string[];
  const options = sandboxOptions(fields, "none");
  if (typeof options === "string") throw new UsageProblem(options);
  return options;
}

/** The flags before `--` (node:util's parser, strict) and the agent's command after it. */
function splitAgentCommand(command: "run" | "attach" | "resume", rest: string[]): { flags: Flags; agent: string[] } {
  const options = command === "attach" ? ATTACH : RUN;
  const parse = () => parseFlags({ args: rest, options, strict: true, allowPositionals: true, tokens: true });
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
  } catch (err) {
    throw new UsageProblem((err as Error).message);
  }
  const terminator = parsed.tokens.find((token) => token.kind === "option-terminator");
  const stray = parsed.tokens.find(
    (token) => token.kind === "positional" && (!terminator || token.index < terminator.index),
  );
  if (stray?.kind === "positional") {
    throw new UsageProblem(`unexpected argument ${stray.value} (put the agent's command after --)`);
  }
  return { flags: parsed.values, agent: parsed.positionals };
}

function commonArgs(flags: Flags, env: NodeJS.ProcessEnv): CommonArgs {
  const edge = flags.edge as string | undefined;
  const runId = flags.run as string | undefined;
  if (!edge) throw new UsageProblem("--edge is required");
  if (!runId) throw new UsageProblem("--run is required");
  const token = runnerToken(flags, env);
  const tokenFile = flags["token-file"];
  const common: CommonArgs = {
    edge,
    runId,
    token,
    graceMs: integer(flags, "grace-ms", 5000),
    giveUpMs: integer(flags, "give-up-ms", 600_000),
    reconnectMinMs: Math.max(1, integer(flags, "reconnect-min-ms", 250)),
    reconnectMaxMs: integer(flags, "reconnect-max-ms", 15_000),
    checkpointIntervalMs: Math.max(50, integer(flags, "checkpoint-interval", 60_000)),
    lingerMs: Math.min(1000, integer(flags, "linger-ms", DEFAULT_LINGER_MS)),
    quiet: flags.quiet === true,
  };
  if (typeof flags.dir === "string") common.dir = flags.dir;
  if (typeof tokenFile === "string") common.tokenFile = path.resolve(tokenFile);
  return common;
}

/** The runner token: --token, else --token-file's contents, else RUNNER_BRIDGE_TOKEN. */
function runnerToken(flags: Flags, env: NodeJS.ProcessEnv): string {
  const inline = flags.token as string | undefined;
  const file = flags["token-file"] as string | undefined;
  if (inline !== undefined && file !== undefined) throw new UsageProblem("pass --token or --token-file, not both");
  let token = inline;
  if (file !== undefined) {
    try {
      token = fs.readFileSync(file, "utf8").trim();
    } catch (err) {
      throw new UsageProblem(`--token-file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (!token) throw new UsageProblem(`--token-file ${file} is empty`);
  }
  token ??= env.RUNNER_BRIDGE_TOKEN;
  if (!token) throw new UsageProblem("no runner token: set RUNNER_BRIDGE_TOKEN or pass --token-file PATH");
  return token;
}

function integer(flags: Flags, name: string, fallback: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !Number.isInteger(n) || n < 0) {
    throw new UsageProblem(`--${name} needs a non-negative integer`);
  }
  return n;
}
