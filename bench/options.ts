/** `npm run bench -- [flags]`: which measurements, on which targets, how many rounds. */
import { parseArgs } from "node:util";

export const MEASUREMENT_IDS = [
  "baseline",
  "single",
  "batched",
  "catchup",
  "latency",
  "ingest",
  "viewers",
  "runs",
  "counts",
  "pools",
  "list",
  "storm",
  "linger",
];
export const TARGET_NAMES = ["serve", "dev", "ref-file", "ref-mem"] as const;

export const USAGE = `npm run bench -- [--only IDS] [--targets NAMES] [--rounds N] [--quick]

  --only IDS       comma-separated, from: ${MEASUREMENT_IDS.join(", ")} (default: all)
  --targets NAMES  comma-separated, from: ${TARGET_NAMES.join(", ")} (default: all)
  --rounds N       rounds per measurement (default: BENCH_ROUNDS or 5)
  --quick          one round: to check that every row works, not to record numbers
                   (and a storm of 1,000 sockets instead of 10,000)
  --storm-sockets N  sockets in the reconnect storm (default 10,000; BENCH_STORM_SOCKETS)
  --baseline REF   also serve commit REF (a git worktree) as target "base", in the same rounds:
                   the table adds its column and serve ÷ base`;

export interface BenchOptions {
  only: Set<string>;
  targets: Set<string>;
  rounds: number;
  /** Sockets in the reconnect storm (`--only storm`). */
  stormSockets: number;
  /** A commit to serve beside the work tree (`base`), or null. */
  baseline: string | null;
}

function list(value: string | undefined, allowed: readonly string[], flag: string): Set<string> {
  if (value === undefined) return new Set(allowed);
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = items.filter((i) => !allowed.includes(i));
  if (unknown.length > 0) throw new Error(`${flag}: unknown ${unknown.join(", ")}\n\n${USAGE}`);
  return new Set(items);
}

function stormSockets(given: string | undefined, quick: boolean): number {
  if (given === undefined) return quick ? 1000 : 10_000;
  const sockets = Number(given);
  if (!Number.isInteger(sockets) || sockets < 5)
    throw new Error(`--storm-sockets ${given}: not an integer of at least 5`);
  return sockets;
}

export function parseBenchOptions(argv: string[]): BenchOptions | "help" {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      only: { type: "string" },
      targets: { type: "string" },
      rounds: { type: "string" },
      quick: { type: "boolean" },
      "storm-sockets": { type: "string" },
      baseline: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const rounds = values.quick ? 1 : Number(values.rounds ?? process.env.BENCH_ROUNDS ?? 5);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds ${values.rounds}: not a positive integer`);
  return {
    only: list(values.only, MEASUREMENT_IDS, "--only"),
    targets: list(values.targets, TARGET_NAMES, "--targets"),
    rounds,
    stormSockets: stormSockets(values["storm-sockets"] ?? process.env.BENCH_STORM_SOCKETS, values.quick === true),
    baseline: values.baseline ?? null,
  };
}
