import { AgentEventType, type UsageTotals } from "../../src/protocol/index.ts";

// Tokens and cost as the console shows them (the run page's facts, the list's Cost column).

/** `$0.0042`, or `—` when the provider stated no cost. */
export function costText(costUsd: number | null | undefined): string {
  if (costUsd === null || costUsd === undefined) return "—";
  return `$${Number(costUsd.toFixed(9))}`;
}

/** `1,500 in (800 cached) · 100 out` */
export function tokensText(usage: Pick<UsageTotals, "inputTokens" | "cachedInputTokens" | "outputTokens">): string {
  const cached = usage.cachedInputTokens > 0 ? ` (${usage.cachedInputTokens.toLocaleString("en-US")} cached)` : "";
  return `${usage.inputTokens.toLocaleString("en-US")} in${cached} · ${usage.outputTokens.toLocaleString("en-US")} out`;
}

/** Runner events that change the run's usage totals: the record is read again after them. */
export function reportsUsage(event: { type: string; data?: unknown }): boolean {
  if (event.type === AgentEventType.AGENT_USAGE) return true;
  const data = event.data as { agentUsage?: unknown } | null | undefined;
  return data?.agentUsage !== undefined;
}
