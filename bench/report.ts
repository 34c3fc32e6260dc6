/** What gets printed: the machine and code under test, per-round values, the final table, server errors. */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO } from "../test/support/wrangler-dev.ts";
import type { CountsReport } from "./measure-counts.ts";
import type { Measurement } from "./measurement.ts";
import { median } from "./stats.ts";
import type { Target } from "./targets.ts";

/** Row key → target name → one sample per round. */
export type Results = Map<string, Map<string, number[]>>;

export function fmt(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return "–";
  const size = Math.abs(value);
  if (size === 0) return "0";
  if (size >= 100) return Math.round(value).toLocaleString("en-US");
  if (size >= 10) return value.toFixed(1);
  if (size >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

function ratio(ours: number | undefined, ref: number | undefined): string {
  if (ours === undefined || ref === undefined || !ref || Number.isNaN(ours) || Number.isNaN(ref)) return "–";
  return `${(ours / ref).toFixed(2)}×`;
}

/** Read-only: the commit and whether src/ has uncommitted edits (both modes build the work tree). */
function gitState(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "wrangler.toml"], {
      cwd: REPO,
      encoding: "utf8",
    }).trim();
    return dirty
      ? `${head} + uncommitted changes under src/ (${dirty.split("\n").length} files)`
      : `${head} (src/ clean)`;
  } catch {
    return "unknown (no git)";
  }
}

export function machine(rounds: number): string[] {
  const cpuinfo = fs.existsSync("/proc/cpuinfo") ? fs.readFileSync("/proc/cpuinfo", "utf8") : "";
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? "unknown";
  const version = (pkg: string) =>
    (JSON.parse(fs.readFileSync(path.join(REPO, "node_modules", pkg, "package.json"), "utf8")) as { version: string })
      .version;
  return [
    `date: ${new Date().toISOString()}`,
    `cpus: ${os.availableParallelism()} × ${model}`,
    `memory: ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `os: ${os.type()} ${os.release()}`,
    `node: ${process.version}; wrangler: ${version("wrangler")}; workerd: ${version("workerd")}; @durable-streams/server: ${version("@durable-streams/server")}`,
    `code under test: ${gitState()}`,
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
    `rounds: ${rounds}`,
  ];
}

/** The Markdown table: the median over rounds per cell; both our modes against each reference store. */
export function printTable(measurements: Measurement[], results: Results, rounds: number): void {
  const value = (key: string, target: string) => {
    const samples = results.get(key)?.get(target);
    return samples && samples.length > 0 ? median(samples) : undefined;
  };
  // A baseline commit (--baseline) gets its column and serve ÷ base at the end.
  const withBase = [...results.values()].some((byTarget) => byTarget.has("base"));
  const lines = [
    `| measurement | unit | serve | wrangler dev | reference (file) | reference (memory) | serve ÷ file | serve ÷ memory | dev ÷ file |${withBase ? " baseline commit | serve ÷ base |" : ""}`,
    `| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |${withBase ? " ---: | ---: |" : ""}`,
  ];
  for (const m of measurements) {
    for (const row of m.rows) {
      if (!results.has(row.key)) continue;
      const [serve, dev, file, mem, base] = ["serve", "dev", "ref-file", "ref-mem", "base"].map((t) =>
        value(row.key, t),
      );
      const better = row.higherIsBetter ? "higher is better" : "lower is better";
      lines.push(
        `| ${row.label} | ${row.unit} (${better}) | ${fmt(serve)} | ${fmt(dev)} | ${fmt(file)} | ${fmt(mem)} | ${ratio(serve, file)} | ${ratio(serve, mem)} | ${ratio(dev, file)} |${withBase ? ` ${fmt(base)} | ${ratio(serve, base)} |` : ""}`,
      );
    }
  }
  const capped = measurements.filter((m) => (m.maxRounds ?? rounds) < rounds).map((m) => m.id);
  const note =
    capped.length > 0
      ? ` (${capped.join(", ")}: at most ${Math.min(...capped.map((id) => measurements.find((m) => m.id === id)?.maxRounds ?? rounds))})`
      : "";
  console.log(`\nmedian of ${rounds} rounds per cell${note}\n`);
  console.log(lines.join("\n"));
}

/** The cost-model counts: one row per counter, one column per phase of the metered run. */
export function printCounts(report: CountsReport): void {
  const lines = [
    `| count | ${report.columns.join(" | ")} |`,
    `| --- | ${report.columns.map(() => "---:").join(" | ")} |`,
  ];
  for (const [key, values] of report.rows) lines.push(`| ${key} | ${values.map(fmt).join(" | ")} |`);
  console.log("\ncost-model counts (npm run serve --meter, one run)\n");
  console.log(lines.join("\n"));
  const bytes = Object.entries(report.databaseBytes).map(([name, b]) => `${name} ${b.toLocaleString("en-US")} bytes`);
  console.log(`\nstored after finish (sql.databaseSize, summed over objects): ${bytes.join(", ")}`);
  const purged = Object.entries(report.purgedBytes).map(([name, b]) => `${name} ${b.toLocaleString("en-US")} bytes`);
  console.log(`stored after purge (the run's tombstone): ${purged.join(", ")}`);
}

/** Prints, per target, the first lines its server logged that look like errors. */
export function printServerErrors(targets: Target[]): void {
  // Anything the servers logged as an error during the run (wrangler's offline `Request.cf`
  // warning is expected here: the sandbox has no route to workers.cloudflare.com).
  for (const t of targets) {
    const lines = t.output().split("\n");
    const errors = lines.filter(
      (line, i) =>
        /\[error\]|\berror:|exception|uncaught/i.test(line) &&
        !/Request\.cf|getaddrinfo ENOTFOUND workers\.cloudflare\.com/.test(line) &&
        !/Request\.cf/.test(lines[i - 1] ?? ""),
    );
    if (errors.length > 0)
      console.log(`\n${t.name} logged ${errors.length} error line(s), first ones:\n${errors.slice(0, 10).join("\n")}`);
  }
}
