/**
 * Versioned SQLite schemas for Durable Objects. Each object class lists its migrations in order
 * beside its schema (run-schema.ts, …) and applies them on every wake, in its constructor. The
 * versions applied so far are rows of `schema_migrations` (Durable Object SQLite does not allow
 * `PRAGMA user_version`). Each migration commits in one transaction with its row, so a crash
 * leaves it either applied and recorded or neither.
 *
 * Rules for a new migration: append it with the next version, never edit or reorder a shipped
 * one, and keep it additive where possible (ADD COLUMN, new tables), since objects are migrated
 * one by one as they wake. Migration 1 is each schema as it stood before migrations existed,
 * written with IF NOT EXISTS so objects created then take it as a no-op. The log core's tables
 * (src/log/schema.ts) are part of migration 1 of RunObject and StreamObject: a change to them is
 * a new migration in both lists, not an edit of LOG_SCHEMA.
 */
export interface Migration {
  version: number;
  name: string;
  /** One or more SQL statements (none: the migration is all `run`). */
  sql?: string;
  /** Work SQL alone cannot do (moving the log into blocks), run after `sql` in its transaction. */
  run?: (sql: SqlStorage) => void;
}

const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at INTEGER NOT NULL
)`;

/** The highest migration version applied to this object's storage, 0 for none. */
export function schemaVersion(sql: SqlStorage): number {
  sql.exec(MIGRATIONS_TABLE);
  return (
    sql.exec<{ version: number | null }>("SELECT MAX(version) AS version FROM schema_migrations").one().version ?? 0
  );
}

/**
 * Applies, in order, every migration newer than the object's schema version. Versions the code
 * does not know (a newer deploy rolled back) are left as they are.
 */
export function applyMigrations(storage: DurableObjectStorage, migrations: readonly Migration[]): void {
  checkOrder(migrations);
  const applied = schemaVersion(storage.sql);
  for (const migration of migrations) {
    if (migration.version <= applied) continue;
    storage.transactionSync(() => {
      if (migration.sql) storage.sql.exec(migration.sql);
      migration.run?.(storage.sql);
      storage.sql.exec(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
        migration.version,
        migration.name,
        Date.now(),
      );
    });
  }
}

function checkOrder(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`migration ${migration.name} has version ${migration.version}; expected ${index + 1}`);
    }
  });
}
