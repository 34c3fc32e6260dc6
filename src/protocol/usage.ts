import { z } from "zod";

// Provider usage (tokens, cost), budgets and tags: what runs report, keep and are found by.

/**
 * The event type a runner reports provider usage with; its data is a UsageDelta. Where the agent
 * states usage inside a line that is another event (claude-code's assistant and result messages),
 * that event's data carries the UsageDelta as its `agentUsage` member instead.
 */
export const AGENT_USAGE = "agent.usage";
export const USAGE_MEMBER = "agentUsage";
/** The outcome error code of a run the object cancelled for passing its budget. */
export const BUDGET_EXCEEDED = "budget_exceeded";

const Tokens = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * One usage report: what the provider used since the runner's previous report. `inputTokens`
 * includes the cached ones, `outputTokens` the reasoning ones (docs/ADAPTERS.md maps each agent).
 */
export const UsageDelta = z
  .object({
    inputTokens: Tokens.optional(),
    cachedInputTokens: Tokens.optional(),
    outputTokens: Tokens.optional(),
    reasoningTokens: Tokens.optional(),
    model: z.string().min(1).max(200).optional(),
    costUsd: z.number().min(0).max(1e9).optional().describe("Only when the provider states it"),
  })
  .meta({
    id: "UsageDelta",
    description:
      "The data of an `agent.usage` event: usage since the previous report. Other members (the native `rawEvent`) are kept in the log and not counted",
  });
export type UsageDelta = z.infer<typeof UsageDelta>;

export const UsageTotals = z
  .object({
    inputTokens: Tokens,
    cachedInputTokens: Tokens,
    outputTokens: Tokens,
    reasoningTokens: Tokens,
    costUsd: z
      .union([z.number().min(0), z.null()])
      .describe("Sum of the costs the provider stated (to the nano-dollar); null when it stated none"),
    model: z.union([z.string(), z.null()]).describe("The model of the latest report that named one"),
  })
  .meta({ id: "UsageTotals", description: "Running totals of a run's usage reports" });
export type UsageTotals = z.infer<typeof UsageTotals>;

export const RunUsage = z
  .object({
    total: UsageTotals,
    generations: z.array(z.object({ generation: z.number().int().min(1), ...UsageTotals.shape })),
  })
  .meta({ id: "RunUsage", description: "A run's usage, overall and per agent generation that reported any" });
export type RunUsage = z.infer<typeof RunUsage>;

export const Budget = z
  .object({
    maxTokens: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe("Bound on inputTokens + outputTokens over the run"),
    maxCostUsd: z.number().gt(0).max(1e9).optional().describe("Bound on the provider-stated cost over the run"),
  })
  .strict()
  .meta({
    id: "Budget",
    description: "Past either bound the run is cancelled, with outcome error code `budget_exceeded`",
  });
export type Budget = z.infer<typeof Budget>;

export const TAGS_MAX = 10;
export const TAG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/=+@-]{0,63}$/;
export const Tag = z.string().regex(TAG_PATTERN, "a tag is 1-64 of A-Z a-z 0-9 . _ : / = + @ - (not first)");
export const Tags = z
  .array(Tag)
  .max(TAGS_MAX)
  .refine((tags) => new Set(tags).size === tags.length, "tags must not repeat")
  .describe(`At most ${TAGS_MAX} short labels, for finding runs (GET /v1/runs?tag=)`);

/** A cost in whole nano-dollars: costs are summed as integers, so totals stay exact. */
export function toNanoUsd(costUsd: number): number {
  return Math.round(costUsd * 1e9);
}

export function fromNanoUsd(nanos: number): number {
  return nanos / 1e9;
}

/** The agent's name, as the list filters by it: a string agent, else its `name` member. */
export function agentNameOf(agent: unknown): string | null {
  if (typeof agent === "string") return agent;
  const name = (agent as { name?: unknown } | null | undefined)?.name;
  return typeof name === "string" ? name : null;
}

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a UTC date, YYYY-MM-DD");

export const UsageQuery = z.object({
  from: Day.optional().describe("First UTC day counted (default: 30 days before `to`)"),
  to: Day.optional().describe("Last UTC day counted (default: today)"),
  groupBy: z.enum(["day", "agent", "tag"]).default("day"),
});
export type UsageQuery = z.infer<typeof UsageQuery>;

const UsageSums = z.object({
  inputTokens: Tokens,
  cachedInputTokens: Tokens,
  outputTokens: Tokens,
  reasoningTokens: Tokens,
  costUsd: z.number().min(0).describe("Provider-stated costs only"),
  runs: z.number().int().min(0).describe("Runs that reported usage in the range"),
});

export const UsageReport = z
  .object({
    from: Day,
    to: Day,
    groupBy: z.enum(["day", "agent", "tag"]),
    groups: z.array(
      z.object({
        key: z
          .union([z.string(), z.null()])
          .describe("The day, agent name or tag; null: runs with no agent name, or no tag"),
        ...UsageSums.shape,
      }),
    ),
    total: UsageSums,
  })
  .meta({
    id: "UsageReport",
    description:
      "The tenant's usage by the UTC day it was reported. By tag a run counts in each of its tags' groups, so groups may sum past the total",
  });
export type UsageReport = z.infer<typeof UsageReport>;
