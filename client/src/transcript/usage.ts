import type { UsageDelta, UsageTotals } from "../../../src/protocol/index.ts";

export type UsageCounts = Pick<
  UsageTotals,
  "inputTokens" | "cachedInputTokens" | "outputTokens" | "reasoningTokens"
> & {
  costUsd: number | null;
};

/** A run's running usage totals as its reports go by. */
export class UsageTally {
  readonly total: UsageCounts = {
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    costUsd: null,
  };
  reports = 0;

  add(delta: UsageDelta): void {
    this.reports++;
    this.total.inputTokens += delta.inputTokens ?? 0;
    this.total.cachedInputTokens += delta.cachedInputTokens ?? 0;
    this.total.outputTokens += delta.outputTokens ?? 0;
    this.total.reasoningTokens += delta.reasoningTokens ?? 0;
    if (delta.costUsd !== undefined) {
      // rounded to a billionth so sums of decimal costs do not drift
      this.total.costUsd = Math.round(((this.total.costUsd ?? 0) + delta.costUsd) * 1e9) / 1e9;
    }
  }
}
