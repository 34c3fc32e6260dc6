import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import { fail, ok, type Result, type RunsPage, type RunStatus } from "../protocol/index.ts";
import { applyMigrations } from "./migrations.ts";
import { TENANT_INDEX_MIGRATIONS } from "./tenant-index-schema.ts";

interface Cursor {
  createdAt: number;
  runId: string;
}

function encodeCursor(cursor: Cursor): string {
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

/** One per tenant: the list of its runs, newest first, kept current by each RunObject. */
export class TenantIndex extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    applyMigrations(ctx.storage, TENANT_INDEX_MIGRATIONS);
  }

  /** The run's status as of its status `version`; a version below the row's is ignored. */
  upsert(runId: string, status: RunStatus, createdAt: number, version: number): void {
    this.ctx.storage.sql.exec(
      `INSERT INTO runs (run_id, status, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at,
         version = excluded.version
       WHERE excluded.version >= runs.version`,
      runId,
      status,
      createdAt,
      Date.now(),
      version,
    );
  }

  /** The run was purged at status `version`: its row stays as a tombstone that older upserts cannot revive. */
  remove(runId: string, version: number): void {
    this.ctx.storage.sql.exec(
      `INSERT INTO runs (run_id, status, created_at, updated_at, version, removed) VALUES (?, 'succeeded', 0, ?, ?, 1)
       ON CONFLICT (run_id) DO UPDATE SET removed = 1, version = excluded.version, updated_at = excluded.updated_at
       WHERE excluded.version >= runs.version`,
      runId,
      Date.now(),
      version,
    );
  }

  list(options: { status?: RunStatus | undefined; limit: number; cursor?: string | undefined }): Result<RunsPage> {
    const cursor = options.cursor === undefined ? null : decodeCursor(options.cursor);
    if (options.cursor !== undefined && cursor === null) {
      return fail("invalid_query", "cursor is not one this API returned");
    }
    const where: string[] = ["removed = 0"];
    const params: (string | number)[] = [];
    if (options.status) {
      where.push("status = ?");
      params.push(options.status);
    }
    if (cursor) {
      where.push("(created_at < ? OR (created_at = ? AND run_id < ?))");
      params.push(cursor.createdAt, cursor.createdAt, cursor.runId);
    }
    const rows = this.ctx.storage.sql
      .exec<{ run_id: string; status: string; created_at: number; updated_at: number }>(
        `SELECT * FROM runs WHERE ${where.join(" AND ")}
         ORDER BY created_at DESC, run_id DESC LIMIT ?`,
        ...params,
        options.limit + 1,
      )
      .toArray();
    const page = rows.slice(0, options.limit);
    const last = page[page.length - 1];
    return ok({
      runs: page.map((row) => ({
        runId: row.run_id,
        status: row.status as RunStatus,
        createdAt: new Date(row.created_at).toISOString(),
        updatedAt: new Date(row.updated_at).toISOString(),
      })),
      nextCursor:
        rows.length > options.limit && last ? encodeCursor({ createdAt: last.created_at, runId: last.run_id }) : null,
    });
  }
}
