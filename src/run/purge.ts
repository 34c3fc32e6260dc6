import type { RunLog } from "./run-log.ts";

/** Drops everything but the run row, which stays as a tombstone. */
export function purgeRun(sql: SqlStorage, log: RunLog, now: number): void {
  log.clear();
  sql.exec("DELETE FROM commands");
  sql.exec("DELETE FROM approvals");
  sql.exec("DELETE FROM timers WHERE kind <> 'outbox'");
  sql.exec("DELETE FROM checkpoint_chunks");
  sql.exec("DELETE FROM checkpoint_uploads");
  sql.exec("DELETE FROM checkpoint");
  sql.exec("DELETE FROM recovery_decisions");
  // A purged run's tokens end with it, those minted before token ids included.
  sql.exec("DELETE FROM run_tokens");
  sql.exec(
    "UPDATE run SET purged_at = ?, agent = NULL, input = NULL, metadata = '{}', legacy_tokens_revoked_at = COALESCE(legacy_tokens_revoked_at, ?) WHERE singleton = 1",
    now,
    now,
  );
}
