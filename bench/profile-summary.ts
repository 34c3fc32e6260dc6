/** Folds a V8 CPU profile of the worker into self time per source file and per function (via the bundle's source map). */
import fs from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  /** Samples per line (1-based) inside this function. */
  positionTicks?: { line: number; ticks: number }[];
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const SPECIAL = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"]);

/** `src/log/log.ts`, `zod`, `hono`, … from a source-map path. */
function group(source: string): string {
  const modules = source.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const rest = source.slice(modules + "node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? source);
  }
  const src = source.indexOf("src/");
  return src >= 0 ? source.slice(src) : source;
}

export interface Summary {
  totalMs: number;
  busyMs: number;
  byGroup: [string, number][];
  byFunction: [string, number][];
  /** Self time by source line, for code of ours and of our dependencies. */
  byLine: [string, number][];
}

/** The most one sample is credited with (5× the 200 µs interval bench/profile.ts sets). */
const MAX_SAMPLE_US = 1000;

export function summarize(profile: CpuProfile, buildDir: string | null): Summary {
  const mapFile = buildDir ? path.join(buildDir, "worker.js.map") : null;
  const map = mapFile && fs.existsSync(mapFile) ? new SourceMap(JSON.parse(fs.readFileSync(mapFile, "utf8"))) : null;
  const bundleFile = buildDir ? path.join(buildDir, "worker.js") : null;
  const bundle = bundleFile && fs.existsSync(bundleFile) ? fs.readFileSync(bundleFile, "utf8").split("\n") : [];
  /** A line's first token: column 0 is often whitespace mapped to the previous statement. */
  const firstColumn = (line: number) => Math.max(0, (bundle[line] ?? "").search(/\S/));
  const selfMs = new Map<number, number>();
  // workerd's sampler takes no samples while the isolate is idle, and the next sample's delta spans
  // the whole idle gap (up to seconds): credited in full, it lands on whatever ran next.
  profile.samples.forEach((id, i) => {
    const deltaUs = Math.min(profile.timeDeltas[i] ?? 0, MAX_SAMPLE_US);
    selfMs.set(id, (selfMs.get(id) ?? 0) + deltaUs / 1000);
  });
  const original = (line: number, column: number): { source: string; line: number } | null => {
    const entry = map?.findEntry(line, column);
    if (!entry || !("originalSource" in entry)) return null;
    return { source: String(entry.originalSource), line: Number(entry.originalLine) + 1 };
  };
  const parentOf = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node);
  /** `name (file:line)` of a JavaScript frame. */
  const describe = (node: ProfileNode): string => {
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    const at = url.endsWith("worker.js") ? original(lineNumber, columnNumber) : null;
    return `${functionName || "(anonymous)"} (${group(at?.source ?? url)}:${at?.line ?? lineNumber + 1})`;
  };
  const byGroup = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byLine = new Map<string, number>();
  let totalMs = 0;
  let busyMs = 0;
  for (const node of profile.nodes) {
    const ms = selfMs.get(node.id) ?? 0;
    if (ms === 0) continue;
    totalMs += ms;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    const name = functionName || "(anonymous)";
    let where: string;
    let fn: string;
    if (SPECIAL.has(name) && !url) {
      where = name;
      fn = name;
    } else if (!url) {
      // Native (a V8 builtin, or a runtime API such as sql.exec): named with the frame that called it.
      const caller = parentOf.get(node.id);
      where = "native (V8 builtins, runtime APIs)";
      fn = `${name} [native] ← ${caller?.callFrame.url ? describe(caller) : "?"}`;
    } else {
      const at = url.endsWith("worker.js") ? original(lineNumber, columnNumber) : null;
      where = group(at?.source ?? url);
      fn = describe(node);
      const ticks = node.positionTicks ?? [];
      const total = ticks.reduce((sum, t) => sum + t.ticks, 0);
      for (const t of ticks) {
        const line = url.endsWith("worker.js") ? original(t.line - 1, firstColumn(t.line - 1)) : null;
        const key = line ? `${group(line.source)}:${line.line}` : `${where}:?`;
        byLine.set(key, (byLine.get(key) ?? 0) + (ms * t.ticks) / total);
      }
    }
    if (name !== "(idle)") busyMs += ms;
    byGroup.set(where, (byGroup.get(where) ?? 0) + ms);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { totalMs, busyMs, byGroup: sorted(byGroup), byFunction: sorted(byFunction), byLine: sorted(byLine) };
}

/** The text of `src/x.ts:12` in this repo (empty for dependencies). */
function sourceLine(where: string): string {
  const [file, line] = where.split(":");
  const full = path.resolve(import.meta.dirname, "..", file ?? "");
  if (!file?.startsWith("src/") || !fs.existsSync(full)) return "";
  return (fs.readFileSync(full, "utf8").split("\n")[Number(line) - 1] ?? "").trim().slice(0, 100);
}

export function printSummary(title: string, summary: Summary, top: number): void {
  const pct = (ms: number) => `${((100 * ms) / summary.busyMs).toFixed(1)}%`;
  console.log(`\n${title}: ${summary.busyMs.toFixed(0)} ms busy of ${summary.totalMs.toFixed(0)} ms sampled\n`);
  console.log("| where (self time) | ms | share of busy |\n| --- | ---: | ---: |");
  for (const [where, ms] of summary.byGroup.filter(([w]) => w !== "(idle)").slice(0, top)) {
    console.log(`| ${where} | ${ms.toFixed(1)} | ${pct(ms)} |`);
  }
  console.log(`\n| function (self time) | ms | share of busy |\n| --- | ---: | ---: |`);
  for (const [fn, ms] of summary.byFunction.filter(([f]) => f !== "(idle)").slice(0, top)) {
    console.log(`| ${fn.replace(/\|/g, "\\|")} | ${ms.toFixed(1)} | ${pct(ms)} |`);
  }
  console.log(`\n| line (self time) | ms | share of busy | source |\n| --- | ---: | ---: | --- |`);
  for (const [where, ms] of summary.byLine.slice(0, top)) {
    console.log(`| ${where} | ${ms.toFixed(1)} | ${pct(ms)} | \`${sourceLine(where).replace(/\|/g, "\\|")}\` |`);
  }
}
