import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantIndexStub } from "../../src/objects/stubs.ts";
import {
  type ShardLayout,
  shardLayout,
  shardName,
  shardOf,
  tenantIndex,
} from "../../src/objects/tenant-index-shards.ts";
import { RUN_STATUSES } from "../../src/protocol/index.ts";
import type { IndexEntry } from "../../src/run/index-sync.ts";
import { mulberry32 } from "../faults/support/seed.ts";

// The sharded index against one index holding the same runs: usage summed across shards must be
// the one index's report exactly (every group, every sum, the runs counted), and a run's syncs all
// land in its one shard. The list's merge is checked over every filter combination in run-search.

const BASE = Date.parse("2026-11-01T00:00:00Z");
const DAYS = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"];
const TAGS = ["a", "b", "c", "ü", "日本"];
const AGENTS = ["codex", "claude-code", null];

/** Runs created before this were indexed before sharding (their shard count is 1); later ones under `shards`. */
const SHARDED_AT = BASE + 3_000;

function entries(seed: number, count: number, shards: number): IndexEntry[] {
  const next = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  return Array.from({ length: count }, (_, n) => {
    const createdAt = BASE + Math.floor(next() * 10_000);
    return {
      runId: `run-${n}-${Math.floor(next() * 1e6).toString(36)}`,
      status: pick(RUN_STATUSES),
      createdAt,
      version: 1,
      indexShards: createdAt < SHARDED_AT ? 1 : shards,
      agent: pick(AGENTS),
      tags: TAGS.filter(() => next() < 0.3),
      metadata: {},
      usage: DAYS.filter(() => next() < 0.5).map((day) => ({
        day,
        inputTokens: Math.floor(next() * 1000),
        cachedInputTokens: Math.floor(next() * 100),
        outputTokens: Math.floor(next() * 500),
        reasoningTokens: Math.floor(next() * 50),
        costNanoUsd: Math.floor(next() * 1e7),
      })),
      costNanoUsd: null,
    };
  });
}

describe("a tenant index sharded by run id", () => {
  it("usage summed across shards is the one index's report, for every grouping", async () => {
    const tenant = `shards-${crypto.randomUUID()}`;
    const single = tenantIndexStub(env, `${tenant}-single`);
    const layout: ShardLayout = { shards: 4 };
    const sharded = tenantIndex(env, tenant, layout);
    const runs = entries(20261202, 300, layout.shards);
    for (const run of runs) {
      await single.upsert(run);
      await sharded.upsert(run);
    }
    for (const run of runs.slice(0, 30)) {
      await single.remove(run.runId, 2);
      await sharded.remove(run.runId, 2, run.indexShards);
    }
    for (const groupBy of ["day", "agent", "tag"] as const) {
      const range = { from: DAYS[0] as string, to: DAYS[3] as string, groupBy };
      const expected = await single.usage(range);
      expect(expected.groups.length, `groups by ${groupBy}`).toBeGreaterThan(1);
      expect(await sharded.usage(range), `usage by ${groupBy}`).toEqual(expected);
    }
    // Each listing as one index gives it, but for updatedAt: the time each copy was written.
    const listed = async (lister: typeof single | typeof sharded) => {
      const page = await lister.list({ limit: 500 });
      if (!page.ok) throw new Error(page.message);
      return { ...page.value, runs: page.value.runs.map(({ updatedAt: _, ...run }) => run) };
    };
    const expected = await listed(single);
    expect(expected.runs.length).toBe(270);
    expect(await listed(sharded)).toEqual(expected);
  }, 60_000);

  it("each run's rows are in its one shard; runs from before sharding are in shard 0", async () => {
    const tenant = `shards-place-${crypto.randomUUID()}`;
    const layout: ShardLayout = { shards: 4 };
    const sharded = tenantIndex(env, tenant, layout);
    const runs = entries(7, 200, layout.shards);
    for (const run of runs) {
      await sharded.upsert(run);
      await sharded.upsert({ ...run, version: 2, status: "succeeded" });
    }
    const held: string[][] = [];
    for (let shard = 0; shard < layout.shards; shard++) {
      const stub = env.TENANTS.get(env.TENANTS.idFromName(shardName(tenant, shard)));
      held.push(
        await runInDurableObject(stub, (_instance, state) =>
          state.storage.sql
            .exec<{ run_id: string }>("SELECT run_id FROM runs ORDER BY run_id")
            .toArray()
            .map((row) => row.run_id),
        ),
      );
    }
    const expected = Array.from({ length: layout.shards }, (_, shard) =>
      runs
        .filter((run) => shardOf(run.runId, run.indexShards) === shard)
        .map((run) => run.runId)
        .sort(),
    );
    expect(held).toEqual(expected);
    expect(expected.every((ids) => ids.length > 10)).toBe(true);
    expect(runs.filter((run) => run.createdAt < SHARDED_AT).every((run) => expected[0]?.includes(run.runId))).toBe(
      true,
    );
  }, 60_000);

  it("the layout comes from the config: 8 shards unless set, and a bad value falls back to it", () => {
    expect(shardLayout({})).toEqual({ shards: 8 });
    expect(shardLayout({ TENANT_INDEX_SHARDS: "1" })).toEqual({ shards: 1 });
    expect(shardLayout({ TENANT_INDEX_SHARDS: "zero" }).shards).toBe(8);
    expect(shardLayout({ TENANT_INDEX_SHARDS: "1000" }).shards).toBe(64);
  });
});
