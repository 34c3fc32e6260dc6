import type { RecoverBody } from "../protocol/index.ts";

interface RawDecision extends Record<string, SqlStorageValue> {
  command_id: string;
  action: string;
  episode: number;
}

/** Operators' recovery decisions, one row per commandId, each for one recovery episode. */
export class RecoveryDecisionStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  find(commandId: string): RecoverBody | null {
    const row = this.sql
      .exec<RawDecision>("SELECT * FROM recovery_decisions WHERE command_id = ?", commandId)
      .toArray()[0];
    return row ? { action: row.action as RecoverBody["action"], commandId: row.command_id } : null;
  }

  forEpisode(episode: number): RecoverBody | null {
    const row = this.sql.exec<RawDecision>("SELECT * FROM recovery_decisions WHERE episode = ?", episode).toArray()[0];
    return row ? { action: row.action as RecoverBody["action"], commandId: row.command_id } : null;
  }

  insert(decision: RecoverBody, episode: number, now: number): void {
    this.sql.exec(
      "INSERT INTO recovery_decisions (command_id, action, episode, decided_at) VALUES (?, ?, ?, ?)",
      decision.commandId,
      decision.action,
      episode,
      now,
    );
  }
}
