import {
  fail,
  fromNanoUsd,
  ok,
  type Result,
  type RunFilters,
  type RunsPage,
  type RunStatus,
} from "../protocol/index.ts";

// The tenant's run list, filtered (tenant-index-schema.ts has the tables). Every filter combination
// walks one index newest first — the narrowest of the filters' own, by a capped count — and
// checks the other filters per row by primary key, so a page costs what it finds, not the tenant's
// whole list. A tag or metadata filter never scans text (no LIKE).

interface Cursor {
  createdAt: number;
  runId: string;
}

export function encodeCursor(cursor: Cursor): string {
  return btoa(JSON.stringify(cursor)).replaceAll("=", "");
}

function decodeCursor(text: string): Cursor | null {
  try {
    const value = JSON.parse(atob(text)) as Partial<Cursor>;
    if (typeof value.createdAt === "number" && typeof value.runId === "string") {
      return { createdAt: value.createdAt, runId: value.runId };
    }
  } catch {
    // fall through
  }
  return null;
}

type Param = string | number;

/** A set of rows, newest first, that the list can walk: its table and the condition selecting it. */
interface Driver {
  from: string;
  where: string;
  params: Param[];
}

/**
 * Counting a candidate's rows stops here (and at the smallest count so far): past it, walking any
 * candidate costs about the same as counting further would.
 */
const ESTIMATE_CAP = 20_000;

function drivers(filters: RunFilters): Driver[] {
  const out: Driver[] = [];
  for (const tag of filters.tags ?? []) out.push({ from: "run_tags", where: "d.tag = ?", params: [tag] });
  for (const [key, value] of filters.meta ?? []) {
    out.push({ from: "run_meta", where: "d.key = ? AND d.value = ?", params: [key, value] });
  }
  if (filters.agent !== undefined) out.push({ from: "runs", where: "d.agent = ?", params: [filters.agent] });
  if (filters.status !== undefined) out.push({ from: "runs", where: "d.status = ?", params: [filters.status] });
  return out;
}

function narrowest(sql: SqlStorage, candidates: Driver[]): Driver {
  if (candidates.length <= 1) return candidates[0] ?? { from: "runs", where: "1 = 1", params: [] };
  let best = candidates[0] as Driver;
  let bestCount = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const count = sql
      .exec<{ n: number }>(
        `SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${candidate.from} d WHERE ${candidate.where} LIMIT ?)`,
        ...candidate.params,
        Math.min(ESTIMATE_CAP, bestCount),
      )
      .one().n;
    if (count < bestCount) {
      best = candidate;
      bestCount = count;
    }
  }
  return best;
}

interface ListedRow extends Record<string, SqlStorageValue> {
  run_id: string;
  status: string;
  created_at: number;
  updated_at: number;
  agent: string | null;
  queue: string | null;
  tags: string;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_nano_usd: number | null;
}

export function listRuns(sql: SqlStorage, filters: RunFilters): Result<RunsPage> {
  const cursor = filters.cursor === undefined ? null : decodeCursor(filters.cursor);
  if (filters.cursor !== undefined && cursor === null) {
    return fail("invalid_query", "cursor is not one this API returned");
  }
  const driver = narrowest(sql, drivers(filters));
  const join = driver.from === "runs" ? "" : "JOIN runs r ON r.run_id = d.run_id";
  const row = driver.from === "runs" ? "d" : "r";
  const where = [driver.where, `${row}.removed = 0`];
  const params: Param[] = [...driver.params];
  const add = (condition: string, ...values: Param[]) => {
    where.push(condition);
    params.push(...values);
  };
  if (filters.status !== undefined) add(`${row}.status = ?`, filters.status);
  if (filters.agent !== undefined) add(`${row}.agent = ?`, filters.agent);
  if (filters.createdAfter !== undefined) add("d.created_at > ?", filters.createdAfter);
  if (filters.createdBefore !== undefined) add("d.created_at < ?", filters.createdBefore);
  if (cursor) add("(d.created_at, d.run_id) < (?, ?)", cursor.createdAt, cursor.runId);
  for (const tag of filters.tags ?? [])
    add(`EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = ${row}.run_id AND t.tag = ?)`, tag);
  for (const [key, value] of filters.meta ?? []) {
    add(`EXISTS (SELECT 1 FROM run_meta m WHERE m.run_id = ${row}.run_id AND m.key = ? AND m.value = ?)`, key, value);
  }
  const rows = sql
    .exec<ListedRow>(
      `SELECT ${row}.* FROM ${driver.from} d ${join} WHERE ${where.join(" AND ")}
       ORDER BY d.created_at DESC, d.run_id DESC LIMIT ?`,
      ...params,
      filters.limit + 1,
    )
    .toArray();
  const page = rows.slice(0, filters.limit);
  const last = page[page.length - 1];
  return ok({
    runs: page.map((listed) => ({
      runId: listed.run_id,
      status: listed.status as RunStatus,
      createdAt: new Date(listed.created_at).toISOString(),
      updatedAt: new Date(listed.updated_at).toISOString(),
      agent: listed.agent,
      queue: listed.queue,
      // Filled in by the route from the queue's dispatcher (src/pools/placement.ts).
      poolHost: null,
      tags: JSON.parse(listed.tags) as string[],
      usage: {
        inputTokens: listed.input_tokens,
        cachedInputTokens: listed.cached_input_tokens,
        outputTokens: listed.output_tokens,
        reasoningTokens: listed.reasoning_tokens,
        costUsd: listed.cost_nano_usd === null ? null : fromNanoUsd(listed.cost_nano_usd),
      },
    })),
    nextCursor:
      rows.length > filters.limit && last ? encodeCursor({ createdAt: last.created_at, runId: last.run_id }) : null,
  });
}
