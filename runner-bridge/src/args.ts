/** Command-line parsing for `run` and `attach` (no dependency; flags as documented in the README). */
export interface CommonArgs {
  edge: string;
  runId: string;
  token: string;
  dir?: string;
  graceMs: number;
  giveUpMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  quiet: boolean;
}

export interface RunArgs extends CommonArgs {
  command: "run";
  adapter: string;
  envNames: string[];
  prompt?: string;
  argv: string[];
}

export interface AttachArgs extends CommonArgs {
  command: "attach";
  waitMs: number;
}

export type Parsed = RunArgs | AttachArgs | { command: "help" };

export const USAGE = `usage:
  runner-bridge run    --edge URL --run ID --token TOKEN [--dir DIR] [--adapter ndjson|codex|claude-code]
                       [--env NAME ...] [--prompt TEXT] -- CMD [ARGS...]
  runner-bridge attach --edge URL --run ID --token TOKEN [--dir DIR] [--wait-ms MS]
common options: --grace-ms MS (SIGTERM→SIGKILL, default 5000), --give-up-ms MS (reconnecting, default 600000),
                --reconnect-min-ms MS (default 250), --reconnect-max-ms MS (default 15000), --quiet
the token may also come from RUNNER_BRIDGE_TOKEN.
exit status: 0 run terminal and acknowledged, 2 fenced, 3 unknown run, 4 terminal run, 5 journal timeout, 1 other`;

export class UsageError extends Error {}

function int(name: string, value: string | undefined): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < 0)
    throw new UsageError(`${name} needs a non-negative integer`);
  return n;
}

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): Parsed {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") return { command: "help" };
  if (command !== "run" && command !== "attach") throw new UsageError(`unknown command ${command}`);
  const flags = new Map<string, string>();
  const envNames: string[] = [];
  let quiet = false;
  let cmd: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === "--") {
      cmd = rest.slice(i + 1);
      break;
    }
    if (arg === "--quiet") {
      quiet = true;
      continue;
    }
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument ${arg} (put the agent's command after --)`);
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    const value = eq > 0 ? arg.slice(eq + 1) : rest[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    if (name === "env") envNames.push(value);
    else flags.set(name, value);
  }
  const allowed =
    command === "run"
      ? [
          "edge",
          "run",
          "token",
          "dir",
          "adapter",
          "prompt",
          "grace-ms",
          "give-up-ms",
          "reconnect-min-ms",
          "reconnect-max-ms",
        ]
      : ["edge", "run", "token", "dir", "wait-ms", "grace-ms", "give-up-ms", "reconnect-min-ms", "reconnect-max-ms"];
  for (const name of flags.keys())
    if (!allowed.includes(name)) throw new UsageError(`unknown option --${name} for ${command}`);
  if (command === "attach" && envNames.length) throw new UsageError("--env belongs to run");
  const edge = flags.get("edge");
  const runId = flags.get("run");
  const token = flags.get("token") ?? env.RUNNER_BRIDGE_TOKEN;
  if (!edge) throw new UsageError("--edge is required");
  if (!runId) throw new UsageError("--run is required");
  if (!token) throw new UsageError("--token is required");
  const common: CommonArgs = {
    edge,
    runId,
    token,
    graceMs: flags.has("grace-ms") ? int("--grace-ms", flags.get("grace-ms")) : 5000,
    giveUpMs: flags.has("give-up-ms") ? int("--give-up-ms", flags.get("give-up-ms")) : 600_000,
    reconnectMinMs: flags.has("reconnect-min-ms")
      ? Math.max(1, int("--reconnect-min-ms", flags.get("reconnect-min-ms")))
      : 250,
    reconnectMaxMs: flags.has("reconnect-max-ms") ? int("--reconnect-max-ms", flags.get("reconnect-max-ms")) : 15_000,
    quiet,
  };
  const dir = flags.get("dir");
  if (dir !== undefined) common.dir = dir;
  if (command === "attach") {
    if (cmd.length) throw new UsageError("attach takes no agent command");
    return { ...common, command, waitMs: flags.has("wait-ms") ? int("--wait-ms", flags.get("wait-ms")) : 10_000 };
  }
  if (cmd.length === 0) throw new UsageError("run needs the agent's command after --");
  const adapter = flags.get("adapter") ?? "ndjson";
  for (const name of envNames) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--env ${name} is not a variable name`);
  }
  const out: RunArgs = { ...common, command, adapter, envNames, argv: cmd };
  const prompt = flags.get("prompt");
  if (prompt !== undefined) out.prompt = prompt;
  return out;
}
