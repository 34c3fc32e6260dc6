/** `npm run serve` flags. Every flag has a default except the ones that only make sense on purpose. */
import path from "node:path";
import { parseArgs } from "node:util";

export interface ServeOptions {
  port: number;
  host: string;
  /** Durable Object state (one SQLite file per object, plus the alarm schedule). */
  dataDir: string;
  /** wrangler.toml (or .json/.jsonc) to build and describe the worker from. */
  configPath: string;
  /** Development mode: secrets fall back to `.dev.vars`; without it TOKEN_SECRET must be in the environment. */
  dev: boolean;
  /** `--var NAME=VALUE`: plain-text bindings that win over `[vars]` and secrets. */
  vars: Record<string, string>;
  /** workerd's inspector (Chrome DevTools protocol) for CPU profiles, e.g. 127.0.0.1:9229. */
  inspector: string | null;
  /** Bench only: wrap the bundle to count requests and SQLite rows (`GET /__meter`). Never in production. */
  meter: boolean;
  /** With --dev: the embedded default pool beside the edge (serve/dev-pool.ts); `--no-pool` leaves it out. */
  pool: boolean;
}

export const USAGE = `npm run serve -- [options]

Builds the production bundle (wrangler deploy --dry-run) and serves it on plain workerd:
the same Durable Objects with SQLite state on local disk, alarms, and static assets.

  --port N            listen port (default 8787)
  --host ADDR         listen address (default 127.0.0.1; 0.0.0.0 for every interface)
  --data DIR          Durable Object state (default .data/serve)
  --dev               development: secrets missing from the environment come from .dev.vars,
                      and a local pool host (2 slots, agents.json) runs the runs that name a profile
  --no-pool           with --dev: no local pool host
  --var NAME=VALUE    a plain-text binding, e.g. --var ALLOW_ANONYMOUS_STREAMS=true (repeatable)
  --config FILE       wrangler config to serve (default wrangler.toml)
  --inspector ADDR    open workerd's inspector on ADDR (host:port), for CPU profiles
  --meter             bench only: count requests and SQLite rows, readable at GET /__meter
  --help

Secrets (API_KEYS, TOKEN_SECRET and any other name in .dev.vars) come from environment variables.
Without --dev, TOKEN_SECRET must be set there: the one in .dev.vars is public.
SIGINT or SIGTERM stops the server. SIGUSR2 to this process (not its group) restarts workerd on the
same build and data, every socket dropping at once: a local deploy (npm run bench -- --only storm).`;

export class UsageError extends Error {}

export function parseOptions(argv: string[], cwd: string): ServeOptions | "help" {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values } = parsed;
  if (values.help) return "help";
  const port = Number(values.port ?? "8787");
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port ${values.port}: not a port`);
  const vars: Record<string, string> = {};
  for (const pair of values.var ?? []) {
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq);
    if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--var ${pair}: expected NAME=VALUE`);
    vars[name] = pair.slice(eq + 1);
  }
  return {
    port,
    host: values.host ?? "127.0.0.1",
    dataDir: path.resolve(cwd, values.data ?? ".data/serve"),
    configPath: path.resolve(cwd, values.config ?? "wrangler.toml"),
    dev: values.dev ?? false,
    vars,
    inspector: values.inspector ?? null,
    meter: values.meter ?? false,
    pool: (values.dev ?? false) && !(values["no-pool"] ?? false),
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      data: { type: "string" },
      config: { type: "string" },
      dev: { type: "boolean" },
      var: { type: "string", multiple: true },
      inspector: { type: "string" },
      meter: { type: "boolean" },
      "no-pool": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}
