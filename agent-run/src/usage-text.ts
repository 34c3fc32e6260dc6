import type { Budget, UsageDelta, UsageTotals } from "../../src/protocol/index.ts";

// Tokens and cost as the CLI shows them (get, list, watch).

type Counts = Pick<UsageTotals, "inputTokens" | "cachedInputTokens" | "outputTokens" | "reasoningTokens"> & {
  costUsd: number | null;
};

const n = (value: number) => value.toLocaleString("en-US");

/** `$0.0042`: a stated cost to as many places as it has (at most 9), or `—` when none was stated. */
export function costText(costUsd: number | null | undefined): string {
  if (costUsd === null || costUsd === undefined) return "—";
  return `$${Number(costUsd.toFixed(9))}`;
}

/** `35 in (20 cached) · 18 out (4 reasoning) · $0.0042` */
export function usageText(usage: Counts): string {
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

/** A run's running totals as a watch sees its reports go by. */
export class UsageTally {
  readonly total: Counts = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, costUsd: null };
  reports = 0;

  add(delta: UsageDelta): void {
    this.reports++;
    this.total.inputTokens += delta.inputTokens ?? 0;
    this.total.cachedInputTokens += delta.cachedInputTokens ?? 0;
    this.total.outputTokens += delta.outputTokens ?? 0;
    this.total.reasoningTokens += delta.reasoningTokens ?? 0;
    if (delta.costUsd !== undefined) {
      this.total.costUsd = Math.round(((this.total.costUsd ?? 0) + delta.costUsd) * 1e9) / 1e9;
    }
  }
}
