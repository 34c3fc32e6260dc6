import type { UsageCounts } from "@agent-run/client/transcript";
import type { Budget } from "../../src/protocol/index.ts";

// Tokens and cost as the CLI shows them (get, list, watch).

const n = (value: number) => value.toLocaleString("en-US");

/** `$0.0042`: a stated cost to as many places as it has (at most 9), or `—` when none was stated. */
export function costText(costUsd: number | null | undefined): string {
  if (costUsd === null || costUsd === undefined) return "—";
  return `$${Number(costUsd.toFixed(9))}`;
}

/** `35 in (20 cached) · 18 out (4 reasoning) · $0.0042` */
export function usageText(usage: UsageCounts): string {
  const cached = usage.cachedInputTokens > 0 ? ` (${n(usage.cachedInputTokens)} cached)` : "";
  const reasoning = usage.reasoningTokens > 0 ? ` (${n(usage.reasoningTokens)} reasoning)` : "";
  const cost = usage.costUsd === null ? "no cost stated" : costText(usage.costUsd);
  return `${n(usage.inputTokens)} in${cached} · ${n(usage.outputTokens)} out${reasoning} · ${cost}`;
}

export function budgetText(budget: Budget | null): string {
  if (!budget) return "none";
  const parts = [];
  if (budget.maxTokens !== undefined) parts.push(`${n(budget.maxTokens)} tokens`);
  if (budget.maxCostUsd !== undefined) parts.push(costText(budget.maxCostUsd));
  return parts.join(" · ");
}
