import {
  AGENT_USAGE,
  BUDGET_EXCEEDED,
  USAGE_MEMBER,
  type Budget,
  fromNanoUsd,
  type RunUsage,
  toNanoUsd,
  type UsageDelta,
  type UsageTotals,
  UsageDelta as UsageDeltaSchema,
  isTerminal,
} from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";

/** What usage accounting and the budget need besides their store: the run, and cancelling it. */
type UsageNeeds = Pick<RunMachine, "effects" | "mustLoad" | "now" | "submitCommand" | "terminalize">;

/** What modules that report usage need: the usage operations (Usage), never its tables. */
export type UsageHost = Pick<RunMachine, "usage">;

// A run's provider usage: the `agent.usage` deltas its runner reports, summed per generation and
// per UTC day in the transaction that stores each event, so the totals are exactly the events'.

interface RawTotals extends Record<string, SqlStorageValue> {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_nano_usd: number | null;
}

/** One UTC day of a run's usage, as the tenant index keeps it for GET /v1/usage. */
export interface UsageDay {
  day: string;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  costNanoUsd: number;
}

const EMPTY: UsageTotals = {
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  costUsd: null,
  model: null,
};

function totalsOf(raw: RawTotals, model: string | null): UsageTotals {
  return {
    inputTokens: raw.input_tokens,
    cachedInputTokens: raw.cached_input_tokens,
    outputTokens: raw.output_tokens,
    reasoningTokens: raw.reasoning_tokens,
    costUsd: raw.cost_nano_usd === null ? null : fromNanoUsd(raw.cost_nano_usd),
    model,
  };
}

export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

class UsageStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** Adds one report of `generation`, made at `now`. */
  add(generation: number, delta: UsageDelta, now: number): void {
    const values = [
      delta.inputTokens ?? 0,
      delta.cachedInputTokens ?? 0,
      delta.outputTokens ?? 0,
      delta.reasoningTokens ?? 0,
    ];
    const cost = delta.costUsd === undefined ? null : toNanoUsd(delta.costUsd);
    this.sql.exec(
      `INSERT INTO usage_totals (generation, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens,
         cost_nano_usd, model) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (generation) DO UPDATE SET input_tokens = input_tokens + excluded.input_tokens,
         cached_input_tokens = cached_input_tokens + excluded.cached_input_tokens,
         output_tokens = output_tokens + excluded.output_tokens,
         reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
         cost_nano_usd = CASE WHEN excluded.cost_nano_usd IS NULL THEN cost_nano_usd
           ELSE COALESCE(cost_nano_usd, 0) + excluded.cost_nano_usd END,
         model = COALESCE(excluded.model, model)`,
      generation,
      ...values,
      cost,
      delta.model ?? null,
    );
    this.sql.exec(
      `INSERT INTO usage_days (day, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, cost_nano_usd)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (day) DO UPDATE SET input_tokens = input_tokens + excluded.input_tokens,
         cached_input_tokens = cached_input_tokens + excluded.cached_input_tokens,
         output_tokens = output_tokens + excluded.output_tokens,
         reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
         cost_nano_usd = cost_nano_usd + excluded.cost_nano_usd`,
      utcDay(now),
      ...values,
      cost ?? 0,
    );
  }

  /** The run's totals, overall and per generation (in order). */
  usage(): RunUsage {
    const rows = this.sql
      .exec<RawTotals & { generation: number; model: string | null }>("SELECT * FROM usage_totals ORDER BY generation")
      .toArray();
    const generations = rows.map((row) => ({ generation: row.generation, ...totalsOf(row, row.model) }));
    if (rows.length === 0) return { total: { ...EMPTY }, generations };
    const sum = (pick: (row: RawTotals) => number) => rows.reduce((total, row) => total + pick(row), 0);
    const costs = rows.filter((row) => row.cost_nano_usd !== null);
    const raw: RawTotals = {
      input_tokens: sum((row) => row.input_tokens),
      cached_input_tokens: sum((row) => row.cached_input_tokens),
      output_tokens: sum((row) => row.output_tokens),
      reasoning_tokens: sum((row) => row.reasoning_tokens),
      cost_nano_usd: costs.length === 0 ? null : sum((row) => row.cost_nano_usd ?? 0),
    };
    const named = rows.filter((row) => row.model !== null);
    return { total: totalsOf(raw, named[named.length - 1]?.model ?? null), generations };
  }

  days(): UsageDay[] {
    return this.sql
      .exec<RawTotals & { day: string }>("SELECT * FROM usage_days ORDER BY day")
      .toArray()
      .map((row) => ({
        day: row.day,
        inputTokens: row.input_tokens,
        cachedInputTokens: row.cached_input_tokens,
        outputTokens: row.output_tokens,
        reasoningTokens: row.reasoning_tokens,
        costNanoUsd: row.cost_nano_usd ?? 0,
      }));
  }
}

/** Why the totals pass the budget, or null while they are within it. */
export function budgetPassed(budget: Budget | null, total: UsageTotals): string | null {
  if (!budget) return null;
  const tokens = total.inputTokens + total.outputTokens;
  if (budget.maxTokens !== undefined && tokens > budget.maxTokens) {
    return `${BUDGET_EXCEEDED}: ${tokens} tokens used, over the budget of ${budget.maxTokens}`;
  }
  const cost = total.costUsd ?? 0;
  if (budget.maxCostUsd !== undefined && toNanoUsd(cost) > toNanoUsd(budget.maxCostUsd)) {
    return `${BUDGET_EXCEEDED}: $${cost} spent, over the budget of $${budget.maxCostUsd}`;
  }
  return null;
}

/** A stored event, as far as its usage goes. */
type UsageReport = { type: string; data?: unknown; generation?: number };

/** What the tenant index keeps of the run's usage (index-sync.ts): its days, and its stated cost. */
export function usageForIndex(sql: SqlStorage): { days: UsageDay[]; costUsd: number | null } {
  const store = new UsageStore(sql);
  return { days: store.days(), costUsd: store.usage().total.costUsd };
}

/** The run's usage and budget: the one holder of the usage tables. */
export class Usage {
  private readonly store: UsageStore;
  private readonly host: UsageNeeds;

  constructor(sql: SqlStorage, host: UsageNeeds) {
    this.store = new UsageStore(sql);
    this.host = host;
  }

  /** The run's totals, overall and per generation (in order). */
  totals(): RunUsage {
    return this.store.usage();
  }

  /**
   * Counts the usage a stored runner event reports, for the generation that sent it: an
   * `agent.usage` event's data, or another event's `agentUsage` member. True for `agent.usage`
   * (nothing else to notice in it). Usage that is not a UsageDelta stays in the log as the agent
   * wrote it and is not counted.
   */
  notice(event: UsageReport): boolean {
    const machine = this.host;
    const own = event.type === AGENT_USAGE;
    const reported = own ? event.data : (event.data as Record<string, unknown> | null | undefined)?.[USAGE_MEMBER];
    if (reported === undefined) return own;
    const delta = UsageDeltaSchema.safeParse(reported);
    if (delta.success) {
      this.store.add(event.generation ?? machine.mustLoad().generation, delta.data, machine.now);
      machine.effects.usageChanged = true;
    }
    return own;
  }

  /**
   * After a batch that changed the usage: a run whose totals passed its budget is cancelled
   * (budget_exceeded) at once, its runner told to stop the agent as with any cancel by the object.
   * True when it was. Once terminal, no later batch is stored, so this happens exactly once.
   */
  enforceBudget(): boolean {
    const machine = this.host;
    if (!machine.effects.usageChanged) return false;
    const run = machine.mustLoad();
    if (isTerminal(run.status)) return false;
    const message = budgetPassed(run.budget, this.store.usage().total);
    if (message === null) return false;
    machine.submitCommand(`~${BUDGET_EXCEEDED}`, "cancel", { reason: BUDGET_EXCEEDED });
    machine.terminalize({ status: "cancelled", error: { code: BUDGET_EXCEEDED, message } }, true);
    return true;
  }
}
