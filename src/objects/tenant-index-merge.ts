import { ok, type Result, type RunsPage } from "../protocol/index.ts";
import { encodeCursor } from "./tenant-index-list.ts";
import type { RawSums, RawUsage } from "./tenant-index-usage.ts";

// Shards' answers as one. Every shard orders its runs by (createdAt, runId) descending and takes a
// cursor as a position in that order, so the same filters and cursor sent to every shard give each
// shard's first `limit` runs after that position; the first `limit` of them all, in the same
// order, are exactly the page one index holding every run would give.

type Listing = RunsPage["runs"][number];

/** The order SQLite gives the list (run ids are ASCII, so UTF-16 and byte order agree). */
function newerFirst(a: Listing, b: Listing): number {
  const at = Date.parse(a.createdAt);
  const bt = Date.parse(b.createdAt);
  if (at !== bt) return bt - at;
  return a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0;
}

export function mergePages(pages: Result<RunsPage>[], limit: number): Result<RunsPage> {
  const runs: Listing[] = [];
  let more = false;
  for (const page of pages) {
    if (!page.ok) return page;
    runs.push(...page.value.runs);
    if (page.value.nextCursor !== null) more = true;
  }
  runs.sort(newerFirst);
  const page = runs.slice(0, limit);
  const last = page[page.length - 1];
  more ||= runs.length > limit;
  return ok({
    runs: page,
    nextCursor: more && last ? encodeCursor({ createdAt: Date.parse(last.createdAt), runId: last.runId }) : null,
  });
}

function add(a: RawSums, b: RawSums): RawSums {
  return {
    key: a.key,
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    costNanoUsd: a.costNanoUsd + b.costNanoUsd,
    // A run lives in one shard only, so its distinct count adds across shards.
    runs: a.runs + b.runs,
  };
}

const utf8 = new TextEncoder();

/** SQLite's ORDER BY key: null first, then text by its UTF-8 bytes (a tag may be any text). */
function byKey(a: RawSums, b: RawSums): number {
  if (a.key === b.key) return 0;
  if (a.key === null) return -1;
  if (b.key === null) return 1;
  const x = utf8.encode(a.key);
  const y = utf8.encode(b.key);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  }
  return x.length - y.length;
}

export function addUsage(shards: RawUsage[]): RawUsage {
  const groups = new Map<string | null, RawSums>();
  let total: RawSums = {
    key: null,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    costNanoUsd: 0,
    runs: 0,
  };
  for (const shard of shards) {
    total = add(total, shard.total);
    for (const group of shard.groups) {
      const before = groups.get(group.key);
      groups.set(group.key, before ? add(before, group) : group);
    }
  }
  return { groups: [...groups.values()].sort(byKey), total };
}
