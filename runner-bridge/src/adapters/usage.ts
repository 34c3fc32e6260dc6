import { AGENT_USAGE, toNanoUsd, type UsageDelta } from "../../../src/protocol/index.ts";
import type { AgentEvent } from "./types.ts";

// Provider usage as the adapters report it (docs/ADAPTERS.md): each report a delta since the
// previous one, derived from the journal's lines alone, so a reread reproduces the same reports.

type Fields = Record<string, unknown>;
const count = (value: unknown): number =>
  typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : 0;
const obj = (value: unknown): Fields => (value && typeof value === "object" ? (value as Fields) : {});

interface TokenCounts {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}
const ZERO: TokenCounts = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
const FIELDS = Object.keys(ZERO) as (keyof TokenCounts)[];

/** `now - before`, field by field, never below zero. */
function minus(now: TokenCounts, before: TokenCounts): TokenCounts {
  const out = { ...ZERO };
  for (const field of FIELDS) out[field] = Math.max(0, now[field] - before[field]);
  return out;
}

/** The delta with only what it says: zero counts left out; null when it says nothing. */
function compact(counts: TokenCounts, extra: { model?: string | undefined; costNanoUsd?: number }): UsageDelta | null {
  const delta: UsageDelta = {};
  for (const field of FIELDS) if (counts[field] > 0) delta[field] = counts[field];
  if (extra.costNanoUsd !== undefined && extra.costNanoUsd > 0) delta.costUsd = extra.costNanoUsd / 1e9;
  if (Object.keys(delta).length === 0) return null;
  if (extra.model) delta.model = extra.model;
  return delta;
}

/** An `agent.usage` event; the native message stays beside the delta as `rawEvent`. */
export function usageEvent(delta: UsageDelta | null, raw: unknown): AgentEvent {
  return { type: AGENT_USAGE, data: { ...(delta ?? {}), rawEvent: raw } };
}

/** The event with `usage` attached as `agentUsage` (claude puts usage inside messages that are other events). */
export function withUsage(event: AgentEvent, delta: UsageDelta | null): AgentEvent {
  if (delta === null) return event;
  return { ...event, data: { ...obj(event.data), agentUsage: delta } };
}

/**
 * codex `thread/tokenUsage/updated`: `total` is the thread's running total, `last` the latest
 * response's. Deltas are differences of totals, so repeats and skipped notifications stay exact;
 * the first one of a process counts only `last`, since a resumed thread's total includes the
 * generations before it, which reported their own.
 */
export function codexUsage(): { setModel(model: unknown): void; delta(params: Fields): UsageDelta | null } {
  let previous: TokenCounts | null = null;
  let model: string | undefined;
  const counts = (breakdown: unknown): TokenCounts => {
    const b = obj(breakdown);
    return {
      inputTokens: count(b.inputTokens),
      cachedInputTokens: count(b.cachedInputTokens),
      outputTokens: count(b.outputTokens),
      reasoningTokens: count(b.reasoningOutputTokens),
    };
  };
  return {
    setModel(value) {
      if (typeof value === "string" && value.length > 0 && value.length <= 200) model = value;
    },
    delta(params) {
      const usage = obj(params.tokenUsage);
      const total = counts(usage.total);
      const delta = previous === null ? counts(usage.last) : minus(total, previous);
      previous = previous === null ? total : { ...total };
      return compact(delta, { model });
    },
  };
}

/** Anthropic usage: `input_tokens` leaves out the cache reads and writes, which ours includes. */
function claudeCounts(usage: unknown): TokenCounts {
  const u = obj(usage);
  const cacheRead = count(u.cache_read_input_tokens);
  return {
    inputTokens: count(u.input_tokens) + cacheRead + count(u.cache_creation_input_tokens),
    cachedInputTokens: cacheRead,
    outputTokens: count(u.output_tokens),
    reasoningTokens: count(obj(u.output_tokens_details).thinking_tokens),
  };
}

/**
 * claude-code: each assistant message's `usage` as it arrives (a message printed once per content
 * block counts once: by message id, only what grew), then each `result`'s cumulative `usage` and
 * `total_cost_usd` less what was reported, so the totals end exactly at the result's.
 */
export function claudeUsage(): {
  assistant(message: Fields): UsageDelta | null;
  result(msg: Fields): UsageDelta | null;
} {
  const byMessage = new Map<string, TokenCounts>();
  const reported = { ...ZERO };
  let costNanoUsd = 0;
  let model: string | undefined;
  const add = (delta: TokenCounts) => {
    for (const field of FIELDS) reported[field] += delta[field];
  };
  return {
    assistant(message) {
      if (typeof message.model === "string" && message.model !== "<synthetic>") model = message.model;
      const id = typeof message.id === "string" ? message.id : null;
      if (id === null || message.usage === undefined) return null;
      const now = claudeCounts(message.usage);
      const delta = minus(now, byMessage.get(id) ?? ZERO);
      byMessage.set(id, now);
      add(delta);
      return compact(delta, { model });
    },
    result(msg) {
      if (msg.usage === undefined && typeof msg.total_cost_usd !== "number") return null;
      const delta = minus(claudeCounts(msg.usage), reported);
      add(delta);
      let costDelta = 0;
      if (typeof msg.total_cost_usd === "number" && Number.isFinite(msg.total_cost_usd)) {
        costDelta = Math.max(0, toNanoUsd(msg.total_cost_usd) - costNanoUsd);
        costNanoUsd += costDelta;
      }
      return compact(delta, { model, costNanoUsd: costDelta });
    },
  };
}
