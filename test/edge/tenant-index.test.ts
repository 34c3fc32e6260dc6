import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantIndexStub } from "../../src/objects/stubs.ts";
import type { RunStatus } from "../../src/protocol/index.ts";
import type { IndexEntry } from "../../src/run/index-sync.ts";
import { call, createRun, json, uniqueRunId } from "./helpers.ts";

async function listed(tenant: string) {
  const page = await tenantIndexStub(env, tenant).list({ limit: 200 });
  if (!page.ok) throw new Error(`listing failed: ${page.message}`);
  return page.value.runs;
}

/** A run's entry with nothing to find it by and no usage. */
function entry(runId: string, status: RunStatus, createdAt: number, version: number): IndexEntry {
  return {
    runId,
    status,
    createdAt,
    version,
    indexShards: 1,
    agent: null,
    tags: [],
    metadata: {},
    usage: [],
    costNanoUsd: null,
  };
}

describe("the tenant index takes versioned upserts", () => {
  it("an older status landing after a newer one is ignored", async () => {
    const tenant = `index-${uniqueRunId()}`;
    const index = tenantIndexStub(env, tenant);
    const createdAt = Date.now();
    await index.upsert(entry("r1", "queued", createdAt, 1));
    await index.upsert(entry("r1", "succeeded", createdAt, 3));
    await index.upsert(entry("r1", "running", createdAt, 2));
    expect(await listed(tenant)).toMatchObject([{ runId: "r1", status: "succeeded" }]);
  });

  it("an upsert older than the removal does not bring a purged run back", async () => {
    const tenant = `index-${uniqueRunId()}`;
    const index = tenantIndexStub(env, tenant);
    const createdAt = Date.now();
    await index.upsert(entry("r1", "running", createdAt, 2));
    await index.remove("r1", 4);
    await index.upsert(entry("r1", "succeeded", createdAt, 3));
    expect(await listed(tenant)).toEqual([]);
  });

  it("a run's own syncs carry rising versions: the list follows the run to its end", async () => {
    const { run } = await createRun();
    await json(await call(`/v1/runs/${run.id}/cancel`, { method: "POST", json: {} }), 202);
    const page = await json(await call("/v1/runs?limit=200"), 200);
    expect(page.runs.find((listing: { runId: string }) => listing.runId === run.id)?.status).toBe("cancelled");
  });
});
