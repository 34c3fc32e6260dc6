import { describe, expect, it } from "vitest";

// Each table of a run is reached through the operations of one module (docs/LAYOUT.md, "src/run/"):
// its store class is named only in the file that defines it and the module that owns it, and
// held there in a private field, so no other module (RunObject, the routes, a socket handler)
// can reach past those operations to the rows.

/** Every source file's text, by its path under src/ ("run/store.ts"). */
const SOURCES: Record<string, string> = Object.fromEntries(
  Object.entries(import.meta.glob("../../src/**/*.ts", { query: "?raw", import: "default", eager: true })).map(
    ([path, text]) => [path.replace(/^\.\.\/\.\.\/src\//, ""), text],
  ),
);

/** A store class: the file defining it, and the modules that may hold one. */
interface Ownership {
  defined: string;
  owners: string[];
}

const STORES: Record<string, Ownership> = {
  RunStore: { defined: "run/store.ts", owners: ["run/run-machine.ts"] },
  CommandStore: { defined: "run/command-store.ts", owners: ["run/run-machine.ts"] },
  ClaimAllowance: { defined: "run/claim-rate.ts", owners: ["run/run-machine.ts"] },
  ApprovalStore: { defined: "run/approval-store.ts", owners: ["run/approvals.ts"] },
  CheckpointStore: { defined: "run/checkpoint-store.ts", owners: ["run/checkpoints.ts"] },
  RecoveryDecisionStore: { defined: "run/decision-store.ts", owners: ["run/recovery-decision.ts"] },
  UsageStore: { defined: "run/usage.ts", owners: [] },
  Outbox: { defined: "run/outbox.ts", owners: [] },
  TokenStore: { defined: "run/token-store.ts", owners: [] },
  Timers: { defined: "run/timers.ts", owners: ["run/deadlines.ts"] },
  ClaimEpoch: { defined: "run/claim-epoch.ts", owners: ["run/run-log.ts"] },
};

/**
 * The run's tables other than its row, and the one file whose SQL names each. The schema creates
 * them all and the purge empties them all (purge.ts); nothing else writes SQL against them.
 */
const TABLES: Record<string, string> = {
  commands: "run/command-store.ts",
  approvals: "run/approval-store.ts",
  timers: "run/timers.ts",
  checkpoint: "run/checkpoint-store.ts",
  checkpoint_uploads: "run/checkpoint-store.ts",
  checkpoint_chunks: "run/checkpoint-store.ts",
  recovery_decisions: "run/decision-store.ts",
  outbox: "run/outbox.ts",
  usage_totals: "run/usage.ts",
  usage_days: "run/usage.ts",
  run_tokens: "run/token-store.ts",
};
const EVERY_TABLE = ["objects/run-schema.ts", "run/purge.ts"];

/** For each table, the files whose SQL names it though they do not own it. */
function tableTrespassers(sources: Record<string, string>, tables: Record<string, string>): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const [table, owner] of Object.entries(tables)) {
    const named = new RegExp(`\\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\\s+${table}\\b`);
    const files = Object.entries(sources)
      .filter(([path, text]) => path !== owner && !EVERY_TABLE.includes(path) && named.test(text))
      .map(([path]) => path)
      .sort();
    if (files.length > 0) found[table] = files;
  }
  return found;
}

/** The code of a file without its comments, so prose naming a class is not a use of it. */
function code(text: string): string {
  return text.replaceAll(/\/\*[\s\S]*?\*\//g, "").replaceAll(/(^|[^:])\/\/.*$/gm, "$1");
}

/** For each store, the files that name its class though they neither define nor own it. */
function trespassers(sources: Record<string, string>, stores: Record<string, Ownership>): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const [store, { defined, owners }] of Object.entries(stores)) {
    const named = new RegExp(`\\b${store}\\b`);
    const files = Object.entries(sources)
      .filter(([path, text]) => path !== defined && !owners.includes(path) && named.test(code(text)))
      .map(([path]) => path)
      .sort();
    if (files.length > 0) found[store] = files;
  }
  return found;
}

/** Fields holding a store that are not private (`readonly x: Store` with no `private`), as "file: line". */
function openFields(sources: Record<string, string>, stores: Record<string, Ownership>): string[] {
  const names = Object.keys(stores).join("|");
  const field = new RegExp(
    `^\\s*(?:(private|protected|public)\\s+)?(?:readonly\\s+)?\\w+\\??:\\s*(?:${names})\\s*[;=]`,
  );
  return Object.entries(sources).flatMap(([path, text]) =>
    code(text)
      .split("\n")
      .filter((line) => {
        const match = field.exec(line);
        return match !== null && match[1] !== "private";
      })
      .map((line) => `${path}: ${line.trim()}`),
  );
}

describe("each run store is owned by one module", () => {
  it("reads the sources it guards (a guard over no files would pass)", () => {
    for (const { defined, owners } of Object.values(STORES)) {
      for (const path of [defined, ...owners]) expect(Object.keys(SOURCES), path).toContain(path);
    }
    expect(Object.keys(SOURCES)).toContain("objects/run-object.ts");
  });

  it("names each store class only in the file defining it and the module owning it", () => {
    expect(trespassers(SOURCES, STORES)).toEqual({});
  });

  it("writes SQL against each table only in the store that owns it", () => {
    expect(tableTrespassers(SOURCES, TABLES)).toEqual({});
  });

  it("reaches the run's event log only through RunLog: no other run module names the log core", () => {
    const runModules = Object.entries(SOURCES).filter(
      ([path]) => path.startsWith("run/") || path.startsWith("objects/run"),
    );
    expect(runModules.length).toBeGreaterThan(10);
    const naming = runModules.filter(
      ([path, text]) => path !== "run/run-log.ts" && /\bLogCore\b|\.core\./.test(code(text)),
    );
    expect(naming.map(([path]) => path)).toEqual([]);
  });

  it("holds every store in a private field", () => {
    expect(openFields(SOURCES, STORES)).toEqual([]);
  });

  it("reports a module reaching for a store it does not own, and a store held in an open field", () => {
    const sources = {
      "run/checkpoint-store.ts": "export class CheckpointStore {}",
      "run/checkpoints.ts": "class Checkpoints {\n  private readonly store: CheckpointStore;\n}",
      "objects/run-object.ts": '// a CheckpointStore in a comment is prose\nimport { CheckpointStore } from "x";',
      "run/run-machine.ts": "class RunMachine {\n  readonly checkpoints: CheckpointStore;\n}",
    };
    const stores = { CheckpointStore: { defined: "run/checkpoint-store.ts", owners: ["run/checkpoints.ts"] } };
    expect(trespassers(sources, stores)).toEqual({ CheckpointStore: ["objects/run-object.ts", "run/run-machine.ts"] });
    expect(openFields(sources, stores)).toEqual(["run/run-machine.ts: readonly checkpoints: CheckpointStore;"]);
    const sql = { "run/alarm.ts": 'sql.exec("DELETE FROM timers WHERE kind = ?", kind);' };
    expect(tableTrespassers({ ...sources, ...sql }, { timers: "run/timers.ts" })).toEqual({ timers: ["run/alarm.ts"] });
  });
});
