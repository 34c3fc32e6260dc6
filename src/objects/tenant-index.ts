import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import type { Result, RunFilters, RunsPage, UsageReport } from "../protocol/index.ts";
import type { IndexEntry } from "../run/index-sync.ts";
import { applyMigrations } from "./migrations.ts";
import { listRuns } from "./tenant-index-list.ts";
import { TENANT_INDEX_MIGRATIONS } from "./tenant-index-schema.ts";
import { type RawUsage, usageReport, usageSums } from "./tenant-index-usage.ts";

/**
 * One shard of a tenant's list of runs, newest first, kept current by each RunObject; a tenant's runs
 * are spread over its shards by run id (tenant-index-shards.ts), shard 0 being the tenant's original index.
 */
export class TenantIndex extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    applyMigrations(ctx.storage, TENANT_INDEX_MIGRATIONS);
  }

  /**
   * The run as of its status `version`; an entry below the row's is ignored. Tags and metadata
   * are written with the run's first row (they never change; a row from before they were indexed
   * gets them at its next entry); its usage with every newer entry.
   */
  upsert(entry: IndexEntry): void {
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      const before = sql
        .exec<{ version: number; findable: number }>("SELECT version, findable FROM runs WHERE run_id = ?", entry.runId)
        .toArray();
      const current = before[0];
      if (current && entry.version < current.version) return;
      const total = entry.usage.reduce(
        (sum, day) => ({
          input: sum.input + day.inputTokens,
          cached: sum.cached + day.cachedInputTokens,
          output: sum.output + day.outputTokens,
          reasoning: sum.reasoning + day.reasoningTokens,
        }),
        { input: 0, cached: 0, output: 0, reasoning: 0 },
      );
      sql.exec(
        `INSERT INTO runs (run_id, status, created_at, updated_at, version, agent, tags, input_tokens,
           cached_input_tokens, output_tokens, reasoning_tokens, cost_nano_usd, queue, findable)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
         ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at,
           agent = excluded.agent, tags = excluded.tags, findable = 1,
           queue = excluded.queue,
           version = excluded.version, input_tokens = excluded.input_tokens,
           cached_input_tokens = excluded.cached_input_tokens, output_tokens = excluded.output_tokens,
           reasoning_tokens = excluded.reasoning_tokens, cost_nano_usd = excluded.cost_nano_usd`,
        entry.runId,
        entry.status,
        entry.createdAt,
        Date.now(),
        entry.version,
        entry.agent,
        JSON.stringify(entry.tags),
        total.input,
        total.cached,
        total.output,
        total.reasoning,
        entry.costNanoUsd,
        entry.queue ?? null,
      );
      if (!current || current.findable === 0) {
        for (const tag of entry.tags) {
          sql.exec(
            "INSERT OR IGNORE INTO run_tags (tag, created_at, run_id) VALUES (?, ?, ?)",
            tag,
            entry.createdAt,
            entry.runId,
          );
        }
        for (const [key, value] of Object.entries(entry.metadata)) {
          sql.exec(
            "INSERT OR IGNORE INTO run_meta (key, value, created_at, run_id) VALUES (?, ?, ?, ?)",
            key,
            value,
            entry.createdAt,
            entry.runId,
          );
        }
      }
      sql.exec("DELETE FROM run_usage WHERE run_id = ?", entry.runId);
      for (const day of entry.usage) {
        sql.exec(
          `INSERT INTO run_usage (run_id, day, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens,
             cost_nano_usd) VALUES (?, ?, ?, ?, ?, ?, ?)`,
          entry.runId,
          day.day,
          day.inputTokens,
          day.cachedInputTokens,
          day.outputTokens,
          day.reasoningTokens,
          day.costNanoUsd,
        );
      }
    });
  }

  /**
   * The run was purged at status `version`: its row stays as a tombstone that older upserts cannot
   * revive, its metadata goes with the run's; its tags and usage stay, as the tenant's accounts.
   */
  remove(runId: string, version: number): void {
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      sql.exec(
        `INSERT INTO runs (run_id, status, created_at, updated_at, version, removed) VALUES (?, 'succeeded', 0, ?, ?, 1)
         ON CONFLICT (run_id) DO UPDATE SET removed = 1, version = excluded.version, updated_at = excluded.updated_at
         WHERE excluded.version >= runs.version`,
        runId,
        Date.now(),
        version,
      );
      sql.exec("DELETE FROM run_meta WHERE run_id = ?", runId);
    });
  }

  list(filters: RunFilters): Result<RunsPage> {
    return listRuns(this.ctx.storage.sql, filters);
  }

  usage(range: { from: string; to: string; groupBy: "day" | "agent" | "tag" }): UsageReport {
    return usageReport(this.ctx.storage.sql, range);
  }

  /** The usage sums in nano-dollars, for a sharded tenant's report (tenant-index-shards.ts adds them). */
  usageSums(range: { from: string; to: string; groupBy: "day" | "agent" | "tag" }): RawUsage {
    return usageSums(this.ctx.storage.sql, range);
  }
}
