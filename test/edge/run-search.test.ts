import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantIndexStub } from "../../src/objects/stubs.ts";
import type { TenantIndex } from "../../src/objects/tenant-index.ts";
import { type ShardLayout, shardName, shardOf, tenantIndex } from "../../src/objects/tenant-index-shards.ts";
import { RUN_STATUSES, type RunFilters, type RunStatus } from "../../src/protocol/index.ts";
import type { IndexEntry } from "../../src/run/index-sync.ts";
import { mulberry32 } from "../faults/support/seed.ts";

// 10,000 runs with random tags, metadata, agents, statuses and creation times (many sharing a
// millisecond) in one tenant's index, then every combination of the list's filters asked of it and
// of a plain in-memory model of what the list means: the same runs in the same order, every page.
// The same runs go into a sharded index too (some created before its sharding, so in shard 0 as a
// tenant indexed before sharding has them): its merged list must give the model's answer as well.

const SEED = Number(process.env.SEARCH_SEED ?? 20261201);
const RUNS = 10_000;
const TAGS = Array.from({ length: 16 }, (_, n) => `tag-${n}`);
const AGENTS = ["codex", "claude-code", "ndjson", "reviewer", "planner", null];
const REPOS = ["alpha", "beta", "gamma", "delta"];
const ENVS = ["prod", "staging", "dev"];
const BASE = Date.parse("2026-11-01T00:00:00Z");

interface ModelRun {
  runId: string;
  status: RunStatus;
  createdAt: number;
  agent: string | null;
  tags: string[];
  metadata: Record<string, string>;
  removed: boolean;
}

/** What GET /v1/runs means, over every run at once. */
function modelList(runs: ModelRun[], filters: RunFilters): string[] {
  return runs
    .filter(
      (run) =>
        !run.removed &&
        (filters.status === undefined || run.status === filters.status) &&
        (filters.agent === undefined || run.agent === filters.agent) &&
        (filters.tags ?? []).every((tag) => run.tags.includes(tag)) &&
        (filters.meta ?? []).every(([key, value]) => run.metadata[key] === value) &&
        (filters.createdAfter === undefined || run.createdAt > filters.createdAfter) &&
        (filters.createdBefore === undefined || run.createdAt < filters.createdBefore),
    )
    .sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0))
    .map((run) => run.runId);
}

describe("finding runs by tags, metadata, agent, status and creation time", () => {
  it("every filter combination answers exactly the model's runs, in its order, page by page", async () => {
    const next = mulberry32(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const tenant = `search-${SEED}-${crypto.randomUUID()}`;
    const index = tenantIndexStub(env, tenant);
    const stub = env.TENANTS.get(env.TENANTS.idFromName(tenant));
    const layout: ShardLayout = { shards: 5 };
    // Runs created before this were indexed before sharding: one shard, so shard 0.
    const shardedAt = BASE + 1_000;
    const indexShards = (run: ModelRun) => (run.createdAt < shardedAt ? 1 : layout.shards);
    const sharded = tenantIndex(env, `${tenant}-sharded`, layout);
    const runs: ModelRun[] = [];
    for (let n = 0; n < RUNS; n++) {
      const tags = TAGS.filter(() => next() < 0.15).slice(0, 10);
      const metadata: Record<string, unknown> = { repo: pick(REPOS), n: Math.floor(next() * 10) };
      if (next() < 0.5) metadata.env = pick(ENVS);
      if (next() < 0.3) metadata.flag = next() < 0.5;
      if (next() < 0.1) metadata.nested = { not: "indexed" };
      const text = Object.fromEntries(
        Object.entries(metadata)
          .filter(([, value]) => typeof value !== "object")
          .map(([key, value]) => [key, String(value)]),
      );
      runs.push({
        runId: `run-${n.toString(36)}-${Math.floor(next() * 1e6).toString(36)}`,
        status: pick(RUN_STATUSES),
        // A few seconds for 10,000 runs: many share their millisecond, so run id breaks the tie.
        createdAt: BASE + Math.floor(next() * 4_000),
        agent: pick(AGENTS),
        tags,
        metadata: text,
        removed: false,
      });
    }
    const entry = (run: ModelRun, version: number): IndexEntry => ({
      runId: run.runId,
      status: run.status,
      createdAt: run.createdAt,
      version,
      indexShards: indexShards(run),
      agent: run.agent,
      tags: run.tags,
      metadata: run.metadata,
      usage: [],
      costNanoUsd: null,
    });
    // The volume goes in inside the object (one call per run over RPC would only measure RPC).
    await runInDurableObject(stub, (instance: TenantIndex) => {
      for (const run of runs) instance.upsert(entry(run, 1));
    });
    const perShard = Array.from({ length: layout.shards }, (): ModelRun[] => []);
    for (const run of runs) perShard[shardOf(run.runId, indexShards(run))]?.push(run);
    for (const [shard, held] of perShard.entries()) {
      // Every shard holds runs (the merge is tested, not one shard's list), shard 0 the most.
      expect(held.length, `runs in shard ${shard}`).toBeGreaterThan(RUNS / layout.shards / 2);
      const shardStub = env.TENANTS.get(env.TENANTS.idFromName(shardName(`${tenant}-sharded`, shard)));
      await runInDurableObject(shardStub, (instance: TenantIndex) => {
        for (const run of held) instance.upsert(entry(run, 1));
      });
    }
    // Later lives: some runs move on (a newer status), some are purged, some get an older sync late.
    const later = runs.filter(() => next() < 0.2);
    for (const run of later) {
      if (next() < 0.3) {
        run.removed = true;
        await index.remove(run.runId, 3);
        await sharded.remove(run.runId, 3, indexShards(run));
      } else {
        run.status = pick(RUN_STATUSES);
        for (const target of [index, sharded]) {
          await target.upsert(entry(run, 2));
          await target.upsert({ ...entry(run, 1), status: "queued" });
        }
      }
    }

    let combinations = 0;
    let pagesRead = 0;
    for (let mask = 0; mask < 1 << 6; mask++) {
      for (let trial = 0; trial < 3; trial++) {
        const tagCount = 1 + Math.floor(next() * 2);
        const filters: RunFilters = { limit: 1 + Math.floor(next() * 200) };
        if (mask & 1) filters.tags = Array.from({ length: tagCount }, () => pick(TAGS));
        if (mask & 2) {
          filters.meta = [["repo", pick(REPOS)]];
          if (next() < 0.5) filters.meta.push(next() < 0.5 ? ["env", pick(ENVS)] : ["flag", String(next() < 0.5)]);
        }
        if (mask & 4) filters.agent = pick(AGENTS.filter((agent) => agent !== null)) as string;
        if (mask & 8) filters.status = pick(RUN_STATUSES);
        if (mask & 16) filters.createdAfter = BASE + Math.floor(next() * 3_000);
        if (mask & 32) filters.createdBefore = (filters.createdAfter ?? BASE) + Math.floor(next() * 2_000);
        const expected = modelList(runs, filters);
        // Small pages, but no more than 30 of them for a broad filter.
        filters.limit = Math.min(200, Math.max(filters.limit, Math.ceil(expected.length / 30)));
        for (const [name, lister] of [
          ["one index", index],
          ["5 shards", sharded],
        ] as const) {
          const got: string[] = [];
          let cursor: string | undefined;
          for (let page = 0; page <= RUNS; page++) {
            const answer = await lister.list({ ...filters, cursor });
            if (!answer.ok) throw new Error(`${name}: list refused ${JSON.stringify(filters)}: ${answer.message}`);
            pagesRead++;
            got.push(...answer.value.runs.map((listed) => listed.runId));
            expect(
              answer.value.runs.length,
              `${name}: a page holds at most limit runs (${JSON.stringify(filters)})`,
            ).toBeLessThanOrEqual(filters.limit);
            if (answer.value.nextCursor === null) break;
            cursor = answer.value.nextCursor;
          }
          expect(got, `${name}, seed ${SEED}, filters ${JSON.stringify(filters)}`).toEqual(expected);
        }
        combinations++;
      }
    }
    expect(combinations).toBe(64 * 3);
    // The filters were not all empty-handed: a model that always answers nothing would fail here.
    expect(pagesRead).toBeGreaterThan(2 * 64 * 3);
  }, 340_000);

  it("a listed run carries its agent, tags and usage; a purged run's metadata no longer finds it", async () => {
    const index = tenantIndexStub(env, `search-one-${crypto.randomUUID()}`);
    const base = {
      indexShards: 1,
      runId: "r1",
      status: "running" as const,
      createdAt: BASE,
      agent: "codex",
      tags: ["a", "b"],
      metadata: { repo: "x" },
      usage: [
        {
          day: "2026-11-01",
          inputTokens: 3,
          cachedInputTokens: 1,
          outputTokens: 2,
          reasoningTokens: 0,
          costNanoUsd: 5,
        },
        {
          day: "2026-11-02",
          inputTokens: 4,
          cachedInputTokens: 0,
          outputTokens: 1,
          reasoningTokens: 1,
          costNanoUsd: 0,
        },
      ],
      costNanoUsd: 5,
    };
    await index.upsert({ ...base, version: 1 });
    const page = await index.list({ limit: 10, meta: [["repo", "x"]], tags: ["b"] });
    expect(page.ok && page.value.runs).toEqual([
      {
        runId: "r1",
        status: "running",
        createdAt: new Date(BASE).toISOString(),
        updatedAt: expect.any(String),
        agent: "codex",
        queue: null,
        poolHost: null,
        tags: ["a", "b"],
        usage: { inputTokens: 7, cachedInputTokens: 1, outputTokens: 3, reasoningTokens: 1, costUsd: 5e-9 },
      },
    ]);
    await index.remove("r1", 2);
    const after = await index.list({ limit: 10, meta: [["repo", "x"]] });
    expect(after.ok && after.value.runs).toEqual([]);
    const usage = await index.usage({ from: "2026-11-01", to: "2026-11-30", groupBy: "day" });
    expect(usage.groups.map((group) => [group.key, group.inputTokens, group.runs])).toEqual([
      ["2026-11-01", 3, 1],
      ["2026-11-02", 4, 1],
    ]);
  });

  it("a row listed before tags and metadata were indexed becomes findable at its next sync", async () => {
    const tenant = `search-old-${crypto.randomUUID()}`;
    const index = tenantIndexStub(env, tenant);
    const entry: IndexEntry = {
      indexShards: 1,
      runId: "old-1",
      status: "running",
      createdAt: BASE,
      version: 1,
      agent: "codex",
      tags: ["legacy"],
      metadata: { repo: "x" },
      usage: [],
      costNanoUsd: null,
    };
    await index.upsert(entry);
    // As a row written by schema version 2 left it: no agent, tags or index rows.
    await runInDurableObject(env.TENANTS.get(env.TENANTS.idFromName(tenant)), (_instance, state) => {
      state.storage.sql.exec("DELETE FROM run_tags");
      state.storage.sql.exec("DELETE FROM run_meta");
      state.storage.sql.exec("UPDATE runs SET findable = 0, agent = NULL, tags = '[]'");
    });
    const before = await index.list({ limit: 10, meta: [["repo", "x"]] });
    expect(before.ok && before.value.runs).toEqual([]);
    await index.upsert({ ...entry, status: "succeeded", version: 2 });
    const after = await index.list({ limit: 10, meta: [["repo", "x"]], tags: ["legacy"], agent: "codex" });
    expect(after.ok && after.value.runs.map((run) => [run.runId, run.status, run.tags])).toEqual([
      ["old-1", "succeeded", ["legacy"]],
    ]);
  });
});
