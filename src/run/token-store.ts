import { fail, ok, type Result, RUN_TOKENS_LIVE_MAX } from "../protocol/index.ts";

/**
 * The run's record of the tokens it minted (the `run_tokens` table): each token id with its role
 * and expiry, and when it was revoked. A token is honoured only while its row says it is live, so
 * revoking one is a row update. Tokens minted before ids existed have no row; the run's
 * `legacy_tokens_revoked_at` ends all of them at once.
 */
export interface TokenSpec {
  role: "runner" | "viewer";
  interact: boolean;
  expiresAt: number;
}

/** What an open socket or a request presents: its token's id (null for a token without one) and expiry. */
export interface PresentedToken {
  tokenId: string | null;
  exp: number;
}

const revoked = () => fail("token_revoked", "this token was revoked");

/** A live token is honoured until the earlier of its own expiry and its row's (none without an id). */
function unexpired(now: number, exp: number, storedExpiry = Number.POSITIVE_INFINITY): Result<null> {
  return Math.min(storedExpiry, exp) <= now ? fail("unauthorized", "token expired") : ok(null);
}

class TokenStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /**
   * Records new tokens and answers their ids, or refuses them all when the run would hold more
   * than RUN_TOKENS_LIVE_MAX live ones. Rows of expired tokens are dropped on the way.
   */
  issue(specs: TokenSpec[], now: number): Result<string[]> {
    this.sql.exec("DELETE FROM run_tokens WHERE expires_at <= ?", now);
    const live = this.sql.exec<{ count: number }>("SELECT COUNT(*) AS count FROM run_tokens").one().count;
    if (live + specs.length > RUN_TOKENS_LIVE_MAX) {
      const message = `a run holds at most ${RUN_TOKENS_LIVE_MAX} unexpired tokens; revoke them all or let some expire`;
      return fail("too_many_tokens", message);
    }
    return ok(specs.map((spec) => this.insert(spec, now)));
  }

  private insert(spec: TokenSpec, now: number): string {
    const tokenId = crypto.randomUUID();
    this.sql.exec(
      "INSERT INTO run_tokens (token_id, role, interact, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      tokenId,
      spec.role,
      spec.interact ? 1 : 0,
      now,
      spec.expiresAt,
    );
    return tokenId;
  }

  /** Whether a presented token may still act on the run. */
  check(token: PresentedToken, now: number): Result<null> {
    if (token.tokenId === null) {
      const run = this.sql
        .exec<{ revoked: number | null }>("SELECT legacy_tokens_revoked_at AS revoked FROM run WHERE singleton = 1")
        .toArray()[0];
      if (run && run.revoked !== null) return revoked();
      return unexpired(now, token.exp);
    }
    const expiresAt = this.liveExpiry(token.tokenId);
    return expiresAt === null ? revoked() : unexpired(now, token.exp, expiresAt);
  }

  /** The stored expiry of a token id still live, or null: revoked, revoked with the whole run, or never minted here. */
  liveExpiry(tokenId: string): number | null {
    const row = this.sql
      .exec<{ expires_at: number; revoked_at: number | null }>(
        "SELECT expires_at, revoked_at FROM run_tokens WHERE token_id = ?",
        tokenId,
      )
      .toArray()[0];
    return !row || row.revoked_at !== null ? null : row.expires_at;
  }

  /** Revokes one token; repeating it answers the first revocation's time. */
  revoke(tokenId: string, now: number): Result<{ revokedAt: number }> {
    const row = this.sql
      .exec<{ revoked_at: number | null }>("SELECT revoked_at FROM run_tokens WHERE token_id = ?", tokenId)
      .toArray()[0];
    if (!row) return fail("not_found", `no token ${tokenId} is live on this run`);
    if (row.revoked_at !== null) return ok({ revokedAt: row.revoked_at });
    this.sql.exec("UPDATE run_tokens SET revoked_at = ? WHERE token_id = ?", now, tokenId);
    return ok({ revokedAt: now });
  }

  /**
   * Revokes every token of the run, those without ids included; answers how many live ones had
   * ids. Their rows are dropped, so their ids are forgotten (revoking one of them later is 404).
   */
  revokeAll(now: number): number {
    const live = this.sql
      .exec<{ count: number }>(
        "SELECT COUNT(*) AS count FROM run_tokens WHERE revoked_at IS NULL AND expires_at > ?",
        now,
      )
      .one().count;
    // Every row goes: a token whose id has no row is refused, and the run's room for new ones is free.
    this.sql.exec("DELETE FROM run_tokens");
    this.sql.exec(
      "UPDATE run SET legacy_tokens_revoked_at = ? WHERE singleton = 1 AND legacy_tokens_revoked_at IS NULL",
      now,
    );
    return live;
  }
}

/**
 * The run's tokens as its operations issue and revoke them, at the operation's time: the one way
 * to its tokens table inside a write (RunMachine.tokens).
 */
export class RunTokens {
  private readonly store: TokenStore;
  private readonly now: number;
  /** True once this write revoked a token: the object's TokenVerdicts are then forgotten. */
  revoked = false;

  constructor(sql: SqlStorage, now: number) {
    this.store = new TokenStore(sql);
    this.now = now;
  }

  issue(specs: TokenSpec[]): Result<string[]> {
    return this.store.issue(specs, this.now);
  }

  revoke(tokenId: string): Result<{ revokedAt: number }> {
    this.revoked = true;
    return this.store.revoke(tokenId, this.now);
  }

  /** Revokes every token of the run; answers how many live ones had ids. */
  revokeAll(): number {
    this.revoked = true;
    return this.store.revokeAll(this.now);
  }
}

/** Whether a presented token may still act on the run, at `now` (read outside or inside a write). */
export function checkRunToken(sql: SqlStorage, token: PresentedToken, now: number): Result<null> {
  return new TokenStore(sql).check(token, now);
}

/**
 * What the object last read of the tokens its sockets present, so a socket's token is not read
 * from storage on every frame: each token id whose row was live (not revoked), with the row's
 * expiry, and whether tokens without ids were still honoured. Only revoking changes a verdict
 * (a row's expiry is fixed when it is minted), and every revocation is a write of this object,
 * which forgets them all as it commits (RunOperations.operate: a token revoked, all of them, an
 * assignment taken back, a purge). Expiry is judged by the clock at every check. Memory is empty
 * after an eviction, so the first check after a wake reads storage.
 */
export class TokenVerdicts {
  private readonly live = new Map<string, number>();
  private legacyLive = false;

  /** Whether a presented token may still act on the run, as checkRunToken answers. */
  check(sql: SqlStorage, token: PresentedToken, now: number): Result<null> {
    if (token.tokenId === null) {
      if (!this.legacyLive) {
        const valid = checkRunToken(sql, token, now);
        // Refused for expiry alone: tokens without ids are still honoured.
        if (valid.ok || valid.code === "unauthorized") this.legacyLive = true;
        return valid;
      }
      return unexpired(now, token.exp);
    }
    let expiresAt = this.live.get(token.tokenId);
    if (expiresAt === undefined) {
      const stored = new TokenStore(sql).liveExpiry(token.tokenId);
      if (stored === null) return revoked();
      expiresAt = stored;
      this.live.set(token.tokenId, stored);
    }
    return unexpired(now, token.exp, expiresAt);
  }

  /** A revocation was written: every verdict is read from storage again. */
  forget(): void {
    this.live.clear();
    this.legacyLive = false;
  }
}
