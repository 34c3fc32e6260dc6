import { DEFAULT_ASSIGN_MS, type DispatchState } from "../protocol/index.ts";

/** One pool run as its dispatcher keeps it (src/objects/dispatcher-schema.ts). Times in ms. */
export interface QueuedRun {
  runId: string;
  state: DispatchState;
  profile: string;
  prompt: string | null;
  start: "run" | "resume";
  generation: number;
  tokenTtlMs: number;
  queuedAt: number;
  lastNotice: number;
  /** The host holding it: its assignment's, while assigned or running. */
  hostId: string | null;
  /** The host that last held it: a reassignment prefers another. */
  lastHost: string | null;
  assignmentId: string | null;
  /** The id of the runner token minted for the assignment; revoked when the lease is taken back. */
  tokenId: string | null;
  leaseDue: number | null;
  /** A host that declined it is not asked again before `avoidUntil`. */
  avoidHost: string | null;
  avoidUntil: number | null;
  reason: string | null;
  updatedAt: number;
}

export interface QueueSettings {
  tenant: string;
  queue: string;
  maxConcurrent: number | null;
  assignMs: number;
}

export function defaultSettings(tenant: string, queue: string): QueueSettings {
  return { tenant, queue, maxConcurrent: null, assignMs: DEFAULT_ASSIGN_MS };
}

/** How long a finished run's row stays, so a late repeat of a notification finds it. */
export const FINISHED_KEPT_MS = 24 * 60 * 60 * 1000;

const COLUMNS = [
  ["runId", "run_id"],
  ["state", "state"],
  ["profile", "profile"],
  ["prompt", "prompt"],
  ["start", "start"],
  ["generation", "generation"],
  ["tokenTtlMs", "token_ttl_ms"],
  ["queuedAt", "queued_at"],
  ["lastNotice", "last_notice"],
  ["hostId", "host_id"],
  ["lastHost", "last_host"],
  ["assignmentId", "assignment_id"],
  ["tokenId", "token_id"],
  ["leaseDue", "lease_due"],
  ["avoidHost", "avoid_host"],
  ["avoidUntil", "avoid_until"],
  ["reason", "reason"],
  ["updatedAt", "updated_at"],
] as const satisfies ReadonlyArray<readonly [keyof QueuedRun, string]>;

const SELECT = `SELECT ${COLUMNS.map(([field, column]) => `${column} AS ${field}`).join(", ")} FROM runs`;
const UPSERT = `INSERT OR REPLACE INTO runs (${COLUMNS.map(([, column]) => column).join(", ")})
  VALUES (${COLUMNS.map(() => "?").join(", ")})`;

/** Typed access to a dispatcher's tables. Callers hold the transaction. */
export class DispatchStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  private rows(where: string, ...params: SqlStorageValue[]): QueuedRun[] {
    return this.sql.exec(`${SELECT} ${where}`, ...params).toArray() as unknown as QueuedRun[];
  }

  settings(): QueueSettings | null {
    const row = this.sql
      .exec<{ tenant: string; queue: string; max_concurrent: number | null; assign_ms: number }>(
        "SELECT tenant, queue, max_concurrent, assign_ms FROM settings",
      )
      .toArray()[0];
    return row
      ? { tenant: row.tenant, queue: row.queue, maxConcurrent: row.max_concurrent, assignMs: row.assign_ms }
      : null;
  }

  /** The queue's settings, created with the defaults on first use. */
  ensureSettings(tenant: string, queue: string): QueueSettings {
    const existing = this.settings();
    if (existing) return existing;
    const settings = defaultSettings(tenant, queue);
    this.sql.exec(
      "INSERT INTO settings (singleton, tenant, queue, max_concurrent, assign_ms) VALUES (1, ?, ?, ?, ?)",
      tenant,
      queue,
      settings.maxConcurrent,
      settings.assignMs,
    );
    return settings;
  }

  updateSettings(maxConcurrent: number | null, assignMs: number): void {
    this.sql.exec("UPDATE settings SET max_concurrent = ?, assign_ms = ?", maxConcurrent, assignMs);
  }

  find(runId: string): QueuedRun | null {
    return this.rows("WHERE run_id = ?", runId)[0] ?? null;
  }

  byAssignment(assignmentId: string): QueuedRun | null {
    return this.rows("WHERE assignment_id = ?", assignmentId)[0] ?? null;
  }

  /** Waiting runs, oldest first: the order they are assigned in. */
  queued(): QueuedRun[] {
    return this.rows("WHERE state = 'queued' ORDER BY queued_at, run_id");
  }

  /** Runs assigned to or claimed through a host: what `maxConcurrent` bounds. */
  active(): QueuedRun[] {
    return this.rows("WHERE state IN ('assigned', 'running')");
  }

  /** Every run a host holds or held that is not finished (GET /v1/pools). */
  held(): QueuedRun[] {
    return this.rows("WHERE host_id IS NOT NULL AND state IN ('assigned', 'running') ORDER BY queued_at, run_id");
  }

  /** Runs not finished, oldest first. */
  unfinished(limit: number): QueuedRun[] {
    return this.rows("WHERE state <> 'finished' ORDER BY queued_at, run_id LIMIT ?", limit);
  }

  lapsed(now: number): QueuedRun[] {
    return this.rows("WHERE state = 'assigned' AND lease_due <= ? ORDER BY lease_due", now);
  }

  save(run: QueuedRun): void {
    this.sql.exec(UPSERT, ...COLUMNS.map(([field]) => run[field]));
  }

  /** Records a notification's key; false when it was seen before. */
  firstNotice(runId: string, key: string, now: number): boolean {
    const inserted = this.sql.exec(
      "INSERT INTO notices (run_id, notice_key, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1",
      runId,
      key,
      now,
    );
    return inserted.toArray().length > 0;
  }

  /** The next time something is due: a lease, the end of a host's avoidance, a finished row's removal. */
  nextDue(): number | null {
    const row = this.sql
      .exec<{ due: number | null }>(
        `SELECT MIN(due) AS due FROM (
           SELECT MIN(lease_due) AS due FROM runs WHERE state = 'assigned'
           UNION ALL SELECT MIN(avoid_until) FROM runs WHERE state = 'queued' AND avoid_until IS NOT NULL
           UNION ALL SELECT MIN(updated_at) + ? FROM runs WHERE state = 'finished')`,
        FINISHED_KEPT_MS,
      )
      .one();
    return row.due;
  }

  /** Drops finished runs past their keeping time, with their notification keys. */
  pruneFinished(now: number): void {
    const cutoff = now - FINISHED_KEPT_MS;
    this.sql.exec(
      "DELETE FROM notices WHERE run_id IN (SELECT run_id FROM runs WHERE state = 'finished' AND updated_at <= ?)",
      cutoff,
    );
    this.sql.exec("DELETE FROM runs WHERE state = 'finished' AND updated_at <= ?", cutoff);
  }
}
