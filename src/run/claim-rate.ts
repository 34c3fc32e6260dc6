/**
 * How often a run may be claimed: a token bucket of `perMinute` claims a minute, holding at most
 * `perMinute`, stored in the run row. A burst of reconnects is allowed; a loop of them (each
 * appending `run.claimed`) is held to the rate, so it cannot grow the log without bound.
 */
export class ClaimAllowance {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** Spends one claim: false, and nothing spent, when the allowance is used up. */
  spend(now: number, perMinute: number): boolean {
    const row = this.sql
      .exec<{ tokens: number | null; at: number }>(
        "SELECT claim_tokens AS tokens, claim_tokens_at AS at FROM run WHERE singleton = 1",
      )
      .one();
    const refill = (Math.max(0, now - row.at) * perMinute) / 60_000;
    const tokens = Math.min(perMinute, (row.tokens ?? perMinute) + refill);
    if (tokens < 1) return false;
    this.sql.exec("UPDATE run SET claim_tokens = ?, claim_tokens_at = ? WHERE singleton = 1", tokens - 1, now);
    return true;
  }
}
