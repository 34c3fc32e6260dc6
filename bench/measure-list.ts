/**
 * List latency at 100,000 runs of one tenant: the TenantIndex (bench/list-worker.ts, bundled with
 * esbuild) on plain workerd, seeded with random tags, metadata, agents and statuses, then each kind
 * of GET /v1/runs filter asked `LIST_REQUESTS` times in turn over loopback HTTP (p50/p99, ms). The
 * peers in the same run: a one-line response from the same worker (what any request costs), and a
 * LIKE scan over every row's tags for the tag filters. Bounded; nothing asserted.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { freePort, REPO } from "../test/support/wrangler-dev.ts";
import { spawnServer, waitUntilAnswering } from "./child.ts";
import { percentile } from "./stats.ts";
import { mulberry32 } from "../test/faults/support/seed.ts";
import { writeOneObjectConfig } from "./one-object-worker.ts";

const WORKERD = (createRequire(import.meta.url)("workerd") as { default: string }).default;
export const LIST_RUNS = Number(process.env.BENCH_LIST_RUNS ?? 100_000);
const LIST_REQUESTS = 60;
const SEED_BATCH = 5_000;
const TAGS = Array.from({ length: 40 }, (_, n) => `tag-${n}`);
const STATUSES = ["queued", "running", "waiting", "succeeded", "failed", "cancelled"];
const AGENTS = ["codex", "claude-code", "ndjson", "reviewer"];
const BASE = Date.parse("2026-01-01T00:00:00Z");

export interface ListRow {
  label: string;
  query: string;
  matches: string;
  p50: number;
  p99: number;
}
export interface ListReport {
  runs: number;
  seedMs: number;
  rows: ListRow[];
}

/** Run n: tag-0 on ~1% of runs, tag-1 on ~30%, the rest 10% each; metadata repo of 20, env of 3. */
function entries(from: number, count: number, next: () => number) {
  return Array.from({ length: count }, (_, i) => {
    const n = from + i;
    const tags = TAGS.filter((_, t) => next() < (t === 0 ? 0.01 : t === 1 ? 0.3 : 0.1)).slice(0, 10);
    return {
      runId: `run-${n.toString().padStart(6, "0")}`,
      status: STATUSES[Math.floor(next() * STATUSES.length)],
      createdAt: BASE + n * 1000,
      version: 1,
      agent: AGENTS[Math.floor(next() * AGENTS.length)],
      tags,
      metadata: { repo: `repo-${Math.floor(next() * 20)}`, env: ["prod", "staging", "dev"][Math.floor(next() * 3)] },
      usage: [],
      costNanoUsd: null,
    };
  });
}

async function timed(url: string): Promise<{ ms: number; count: number; nextCursor: string | null }> {
  const start = performance.now();
  const res = await fetch(url);
  const body = (await res.json()) as { count?: number; nextCursor?: string | null; error?: string };
  const ms = performance.now() - start;
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return { ms, count: body.count ?? 0, nextCursor: body.nextCursor ?? null };
}

export async function measureList(): Promise<ListReport> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-list-"));
  const port = await freePort();
  await build({
    entryPoints: [path.join(REPO, "bench/list-worker.ts")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    external: ["cloudflare:workers"],
    outfile: path.join(dir, "list-worker.js"),
    logLevel: "warning",
  });
  writeOneObjectConfig({
    dir,
    module: "list-worker.js",
    binding: "INDEX",
    className: "BenchIndex",
    port,
    compatibilityDate: "2026-11-01",
  });
  const server = spawnServer(WORKERD, ["serve", "--experimental", "config.capnp"], { cwd: dir });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilAnswering(`${url}/ping`, server, "the list bench worker on workerd", 30_000, 200);
    const next = mulberry32(42);
    const seedStart = performance.now();
    for (let from = 0; from < LIST_RUNS; from += SEED_BATCH) {
      const res = await fetch(`${url}/seed`, {
        method: "POST",
        body: JSON.stringify(entries(from, Math.min(SEED_BATCH, LIST_RUNS - from), next)),
      });
      if (!res.ok) throw new Error(`seeding: ${res.status} ${await res.text()}`);
    }
    const seedMs = performance.now() - seedStart;
    const middle = new Date(BASE + (LIST_RUNS / 2) * 1000).toISOString();
    const asks: [string, string][] = [
      ["request floor (no object)", "/ping"],
      ["no filter, first page", "/list?limit=50"],
      ["status", "/list?limit=50&status=running"],
      ["rare tag (~1%)", "/list?limit=50&tag=tag-0"],
      ["  peer: LIKE scan", "/list?limit=50&tag=tag-0&peer=scan"],
      ["common tag (~30%)", "/list?limit=50&tag=tag-1"],
      ["  peer: LIKE scan", "/list?limit=50&tag=tag-1&peer=scan"],
      ["two tags", "/list?limit=50&tag=tag-0&tag=tag-1"],
      ["  peer: LIKE scan", "/list?limit=50&tag=tag-0&tag=tag-1&peer=scan"],
      ["meta.repo + meta.env", "/list?limit=50&meta.repo=repo-7&meta.env=prod"],
      ["tag + meta + status", "/list?limit=50&tag=tag-2&meta.repo=repo-3&status=failed"],
      ["agent + createdBefore", `/list?limit=50&agent=codex&createdBefore=${middle}`],
      ["rare tag + status, none left", "/list?limit=50&tag=tag-0&status=waiting&createdAfter=2030-01-01T00:00:00Z"],
    ];
    const samples = asks.map((): number[] => []);
    const counts = asks.map(() => 0);
    // A warm-up pass, then the asks in turn, so machine noise lands on all of them.
    for (const [, ask] of asks) if (ask !== "/ping") await timed(url + ask);
    for (let round = 0; round < LIST_REQUESTS; round++) {
      for (const [i, [, ask]] of asks.entries()) {
        if (ask === "/ping") {
          const start = performance.now();
          await (await fetch(url + ask)).text();
          samples[i]?.push(performance.now() - start);
          continue;
        }
        const answer = await timed(url + ask);
        samples[i]?.push(answer.ms);
        counts[i] = answer.count;
      }
    }
    // The 40th page by cursor (or the last, for a smaller BENCH_LIST_RUNS), then its latency alone.
    let cursor: string | null = null;
    for (let page = 0; page < 40; page++) {
      const answer: { nextCursor: string | null } = await timed(
        `${url}/list?limit=50${cursor ? `&cursor=${cursor}` : ""}`,
      );
      if (answer.nextCursor === null) break;
      cursor = answer.nextCursor;
    }
    if (cursor === null) throw new Error(`list bench: ${LIST_RUNS} runs fill no second page of 50`);
    const deep: number[] = [];
    for (let round = 0; round < LIST_REQUESTS; round++) {
      deep.push((await timed(`${url}/list?limit=50&cursor=${cursor}`)).ms);
    }
    const rows: ListRow[] = asks.map(([label, ask], i) => ({
      label,
      query: ask,
      matches: ask === "/ping" ? "" : String(Math.min(counts[i] ?? 0, 50)),
      p50: percentile(samples[i] ?? [], 50),
      p99: percentile(samples[i] ?? [], 99),
    }));
    rows.push({
      label: "page 41 by cursor",
      query: "/list?limit=50&cursor=…",
      matches: "50",
      p50: percentile(deep, 50),
      p99: percentile(deep, 99),
    });
    return { runs: LIST_RUNS, seedMs, rows };
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function printList(report: ListReport): void {
  console.log(
    `\nlist latency, ${report.runs.toLocaleString("en-US")} runs of one tenant in its TenantIndex (plain workerd, loopback HTTP; ms over ${LIST_REQUESTS} requests; seeded in ${(report.seedMs / 1000).toFixed(1)} s):`,
  );
  const floor = report.rows[0]?.p50 ?? 0;
  console.log(
    `  ${"filter".padEnd(30)} ${"page".padStart(5)} ${"p50".padStart(8)} ${"p99".padStart(8)} ${"p50 / floor".padStart(12)}`,
  );
  for (const row of report.rows) {
    const ratio = floor > 0 ? `${(row.p50 / floor).toFixed(1)}×` : "";
    console.log(
      `  ${row.label.padEnd(30)} ${row.matches.padStart(5)} ${row.p50.toFixed(2).padStart(8)} ${row.p99.toFixed(2).padStart(8)} ${ratio.padStart(12)}`,
    );
  }
}
