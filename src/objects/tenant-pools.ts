import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import { fail, ok, type PoolKeyRecord, type Result } from "../protocol/index.ts";
import { applyMigrations } from "./migrations.ts";
import { TENANT_POOLS_MIGRATIONS } from "./tenant-pools-schema.ts";

interface KeyRow extends Record<string, SqlStorageValue> {
  id: string;
  secret_hash: string;
  label: string | null;
  created_at: number;
  revoked_at: number | null;
}

const record = (row: KeyRow): PoolKeyRecord => ({
  id: row.id,
  label: row.label,
  createdAt: new Date(row.created_at).toISOString(),
});

/** Most queues a tenant may have: each is a dispatcher the pool listing asks. */
export const MAX_QUEUES = 100;

/** One per tenant: its pool keys (src/auth/pool-keys.ts) and the names of its queues. */
export class TenantPools extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    applyMigrations(ctx.storage, TENANT_POOLS_MIGRATIONS);
  }

  mintKey(id: string, secretHash: string, label: string | null): PoolKeyRecord {
    const now = Date.now();
    this.ctx.storage.sql.exec(
      "INSERT INTO pool_keys (id, secret_hash, label, created_at) VALUES (?, ?, ?, ?)",
      id,
      secretHash,
      label,
      now,
    );
    return { id, label, createdAt: new Date(now).toISOString() };
  }

  listKeys(): PoolKeyRecord[] {
    return this.ctx.storage.sql
      .exec<KeyRow>("SELECT * FROM pool_keys WHERE revoked_at IS NULL ORDER BY created_at, id")
      .toArray()
      .map(record);
  }

  /** Revokes a key; a repeat answers the first revocation's time. */
  revokeKey(id: string): Result<{ revokedAt: number; first: boolean }> {
    const row = this.ctx.storage.sql.exec<KeyRow>("SELECT * FROM pool_keys WHERE id = ?", id).toArray()[0];
    if (!row) return fail("not_found", `no pool key ${id}`);
    if (row.revoked_at !== null) return ok({ revokedAt: row.revoked_at, first: false });
    const now = Date.now();
    this.ctx.storage.sql.exec("UPDATE pool_keys SET revoked_at = ? WHERE id = ?", now, id);
    return ok({ revokedAt: now, first: true });
  }

  /** True when `id` is a live key of this tenant whose secret hashes to `secretHash`. */
  checkKey(id: string, secretHash: string): boolean {
    const row = this.ctx.storage.sql
      .exec<KeyRow>("SELECT * FROM pool_keys WHERE id = ? AND revoked_at IS NULL", id)
      .toArray()[0];
    return row !== undefined && row.secret_hash === secretHash;
  }

  /** True while key `id` exists and is not revoked (a pool socket re-checks it on hello). */
  keyLive(id: string): boolean {
    return (
      this.ctx.storage.sql.exec("SELECT 1 FROM pool_keys WHERE id = ? AND revoked_at IS NULL", id).toArray().length > 0
    );
  }

  /** Records a queue name on its first use; false past MAX_QUEUES. */
  addQueue(name: string): boolean {
    if (!this.queueAllowed(name)) return false;
    this.recordQueue(name);
    return true;
  }

  /**
   * Records a queue a stored run already uses. A create asks queueAllowed first and records once
   * the run is stored, so a refused create records nothing; creates racing for the last place may
   * take the tenant a few past MAX_QUEUES, never further.
   */
  recordQueue(name: string): void {
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO queues (name, created_at) VALUES (?, ?)", name, Date.now());
  }

  /** Whether `name` is a queue of the tenant or could become one; stores nothing. */
  queueAllowed(name: string): boolean {
    const sql = this.ctx.storage.sql;
    if (sql.exec("SELECT 1 FROM queues WHERE name = ?", name).toArray().length > 0) return true;
    return sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM queues").one().n < MAX_QUEUES;
  }

  queues(): string[] {
    return this.ctx.storage.sql
      .exec<{ name: string }>("SELECT name FROM queues ORDER BY name")
      .toArray()
      .map((row) => row.name);
  }
}
