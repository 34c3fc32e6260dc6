import { fromNanoUsd, type UsageReport } from "../protocol/index.ts";

// GET /v1/usage from the tenant index: each run's usage per UTC day (run_usage), summed by day,
// agent or tag over a range of days, walking the (day, run_id) key.

interface SumRow extends Record<string, SqlStorageValue> {
  key: string | null;
  input_tokens: number | null;
  cached_input_tokens: number | null;
  output_tokens: number | null;
  reasoning_tokens: number | null;
  cost_nano_usd: number | null;
  runs: number;
}

const SUMS = `SUM(u.input_tokens) AS input_tokens, SUM(u.cached_input_tokens) AS cached_input_tokens,
  SUM(u.output_tokens) AS output_tokens, SUM(u.reasoning_tokens) AS reasoning_tokens,
  SUM(u.cost_nano_usd) AS cost_nano_usd, COUNT(DISTINCT u.run_id) AS runs`;

const GROUPINGS = {
  day: { key: "u.day", join: "" },
  agent: { key: "r.agent", join: "JOIN runs r ON r.run_id = u.run_id" },
  tag: { key: "t.tag", join: "LEFT JOIN run_tags t ON t.run_id = u.run_id" },
} as const;

/** One group's sums as stored: whole nano-dollars, so shards' sums add exactly. */
export interface RawSums {
  key: string | null;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  costNanoUsd: number;
  runs: number;
}

export interface RawUsage {
  groups: RawSums[];
  total: RawSums;
}

function raw(row: SumRow): RawSums {
  return {
    key: row.key,
    inputTokens: row.input_tokens ?? 0,
    cachedInputTokens: row.cached_input_tokens ?? 0,
    outputTokens: row.output_tokens ?? 0,
    reasoningTokens: row.reasoning_tokens ?? 0,
    costNanoUsd: row.cost_nano_usd ?? 0,
    runs: row.runs,
  };
}

export function usageSums(
  sql: SqlStorage,
  range: { from: string; to: string; groupBy: keyof typeof GROUPINGS },
): RawUsage {
  const grouping = GROUPINGS[range.groupBy];
  const groups = sql
    .exec<SumRow>(
      `SELECT ${grouping.key} AS key, ${SUMS} FROM run_usage u ${grouping.join}
       WHERE u.day >= ? AND u.day <= ? GROUP BY ${grouping.key} ORDER BY ${grouping.key}`,
      range.from,
      range.to,
    )
    .toArray();
  const total = sql
    .exec<SumRow>(`SELECT NULL AS key, ${SUMS} FROM run_usage u WHERE u.day >= ? AND u.day <= ?`, range.from, range.to)
    .one();
  return { groups: groups.map(raw), total: raw(total) };
}

function reported({ key: _key, costNanoUsd, ...counts }: RawSums) {
  return { ...counts, costUsd: fromNanoUsd(costNanoUsd) };
}

/** The report from sums: one shard's, or several shards' added by addUsage. */
export function usageFromSums(
  range: { from: string; to: string; groupBy: keyof typeof GROUPINGS },
  sums: RawUsage,
): UsageReport {
  return {
    ...range,
    groups: sums.groups.map((group) => ({ key: group.key, ...reported(group) })),
    total: reported(sums.total),
  };
}

export function usageReport(
  sql: SqlStorage,
  range: { from: string; to: string; groupBy: keyof typeof GROUPINGS },
): UsageReport {
  return usageFromSums(range, usageSums(sql, range));
}
