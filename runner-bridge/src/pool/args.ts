import fs from "node:fs";
import path from "node:path";
import { parseArgs as parseFlags } from "node:util";
import { DEFAULT_QUEUE, QueueName } from "../../../src/protocol/pool.ts";

/** `runner-bridge pool` flags (docs/POOLS.md). */
export interface PoolArgs {
  edge: string;
  queue: string;
  slots: number;
  agentsFile: string;
  /** Each assignment gets `<dir>/<runId>/g<generation>-<assignmentId>/`. */
  dir: string;
  labels: string[];
  key: string;
  /** Said once at start when the key came from argv, where the process list shows it. */
  keyWarning: string | null;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  graceMs: number;
  quiet: boolean;
}

export const POOL_USAGE = `  runner-bridge pool   --edge URL [--queue NAME] [--slots N] [--agents FILE] [--dir DIR] [--labels a,b]
                       [--key-file FILE] [--reconnect-min-ms MS] [--reconnect-max-ms MS] [--quiet]
    (a pool host: dials the edge, takes the runs its queue assigns and runs each with runner-bridge run
     or resume in a fresh directory; the pool key comes from RUNNER_POOL_KEY or --key-file)`;

export class PoolUsageError extends Error {}

export function parsePoolArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): PoolArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseFlags({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        edge: { type: "string" },
        queue: { type: "string" },
        slots: { type: "string" },
        agents: { type: "string" },
        dir: { type: "string" },
        labels: { type: "string" },
        key: { type: "string" },
        "key-file": { type: "string" },
        "reconnect-min-ms": { type: "string" },
        "reconnect-max-ms": { type: "string" },
        "grace-ms": { type: "string" },
        quiet: { type: "boolean" },
      },
    }));
  } catch (err) {
    throw new PoolUsageError((err as Error).message);
  }
  const edge = values.edge as string | undefined;
  if (!edge) throw new PoolUsageError("--edge is required");
  const queue = (values.queue as string | undefined) ?? DEFAULT_QUEUE;
  if (!QueueName.safeParse(queue).success) throw new PoolUsageError(`--queue ${queue}: not a queue name`);
  const slots = integer(values, "slots", 1);
  if (slots < 1 || slots > 256) throw new PoolUsageError("--slots needs an integer from 1 to 256");
  const labels = ((values.labels as string | undefined) ?? "").split(",").filter(Boolean);
  const { key, keyWarning } = poolKey(values, env);
  return {
    edge,
    queue,
    slots,
    agentsFile: path.resolve((values.agents as string | undefined) ?? "agents.json"),
    dir: path.resolve((values.dir as string | undefined) ?? ".runner-pool"),
    labels,
    key,
    keyWarning,
    reconnectMinMs: Math.max(1, integer(values, "reconnect-min-ms", 250)),
    reconnectMaxMs: integer(values, "reconnect-max-ms", 15_000),
    graceMs: integer(values, "grace-ms", 5000),
    quiet: values.quiet === true,
  };
}

function poolKey(values: Record<string, unknown>, env: NodeJS.ProcessEnv): { key: string; keyWarning: string | null } {
  const file = values["key-file"] as string | undefined;
  if (typeof values.key === "string") {
    return {
      key: values.key,
      keyWarning: "--key puts the pool key in the process list; prefer RUNNER_POOL_KEY or --key-file",
    };
  }
  if (file) {
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8").trim();
    } catch (err) {
      throw new PoolUsageError(`--key-file ${file}: ${(err as Error).message}`);
    }
    if (!text) throw new PoolUsageError(`--key-file ${file} is empty`);
    return { key: text, keyWarning: null };
  }
  const key = env.RUNNER_POOL_KEY;
  if (!key) throw new PoolUsageError("a pool key is required: set RUNNER_POOL_KEY (or pass --key-file FILE)");
  return { key, keyWarning: null };
}

function integer(values: Record<string, unknown>, name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !Number.isInteger(n) || n < 0) {
    throw new PoolUsageError(`--${name} needs a non-negative integer`);
  }
  return n;
}
