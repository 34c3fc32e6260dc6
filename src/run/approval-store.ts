import {
  APPROVAL_SUMMARY_DATA_BYTES,
  type ApprovalRecord,
  type ApprovalState,
  type ApprovalSummary,
} from "../protocol/index.ts";

interface RawApproval extends Record<string, SqlStorageValue> {
  request_id: string;
  state: string;
  requested_seq: number;
  data: string;
  decision: string | null;
  reason: string | null;
  created_at: number;
  expires_at: number | null;
  resolved_at: number | null;
}

interface RawSummary extends Record<string, SqlStorageValue> {
  request_id: string;
  state: string;
  requested_seq: number;
  created_at: number;
  expires_at: number | null;
  bytes: number;
  data: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

function toRecord(row: RawApproval): ApprovalRecord {
  const record: ApprovalRecord = {
    requestId: row.request_id,
    state: row.state as ApprovalState,
    requestedSeq: row.requested_seq,
    data: JSON.parse(row.data),
    createdAt: iso(row.created_at),
  };
  if (row.decision !== null) record.decision = row.decision as "approve" | "deny";
  if (row.reason !== null) record.reason = row.reason;
  if (row.expires_at !== null) record.expiresAt = iso(row.expires_at);
  if (row.resolved_at !== null) record.resolvedAt = iso(row.resolved_at);
  return record;
}

/** Rows of the approvals table. */
export class ApprovalStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  find(requestId: string): ApprovalRecord | null {
    const row = this.sql.exec<RawApproval>("SELECT * FROM approvals WHERE request_id = ?", requestId).toArray()[0];
    return row ? toRecord(row) : null;
  }

  insertPending(
    requestId: string,
    requestedSeq: number,
    data: unknown,
    generation: number,
    now: number,
    expiresAt: number,
  ): void {
    this.sql.exec(
      `INSERT INTO approvals (request_id, state, requested_seq, data, generation, created_at, expires_at)
       VALUES (?, 'pending', ?, ?, ?, ?, ?) ON CONFLICT (request_id) DO NOTHING`,
      requestId,
      requestedSeq,
      JSON.stringify(data ?? null),
      generation,
      now,
      expiresAt,
    );
  }

  /** Expires the requests of generations before `generation`, whose agent is gone; answers their ids. */
  expireOlderGenerations(generation: number, reason: string, now: number): string[] {
    return this.sql
      .exec<{ request_id: string }>(
        `UPDATE approvals SET state = 'expired', reason = ?, resolved_at = ?
         WHERE state = 'pending' AND generation < ? RETURNING request_id`,
        reason,
        now,
        generation,
      )
      .toArray()
      .map((row) => row.request_id)
      .sort();
  }

  resolve(
    requestId: string,
    state: ApprovalState,
    decision: "approve" | "deny",
    reason: string | undefined,
    now: number,
  ): ApprovalRecord {
    this.sql.exec(
      "UPDATE approvals SET state = ?, decision = ?, reason = ?, resolved_at = ? WHERE request_id = ?",
      state,
      decision,
      reason ?? null,
      now,
      requestId,
    );
    return this.find(requestId) as ApprovalRecord;
  }

  /** The generation whose agent asked. */
  generationOf(requestId: string): number | null {
    const row = this.sql
      .exec<{ generation: number }>("SELECT generation FROM approvals WHERE request_id = ?", requestId)
      .toArray()[0];
    return row ? row.generation : null;
  }

  /**
   * An approval refused as it was asked (the run had its most pending already): recorded as
   * expired with `reason`, so a repeat of the request is not opened later. Its data stays in the
   * log only.
   */
  insertRefused(requestId: string, requestedSeq: number, generation: number, reason: string, now: number): void {
    this.sql.exec(
      `INSERT INTO approvals (request_id, state, requested_seq, data, decision, reason, generation, created_at, resolved_at)
       VALUES (?, 'expired', ?, 'null', 'deny', ?, ?, ?, ?) ON CONFLICT (request_id) DO NOTHING`,
      requestId,
      requestedSeq,
      reason,
      generation,
      now,
      now,
    );
  }

  pendingCount(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM approvals WHERE state = 'pending'").one().n;
  }

  /**
   * The pending approvals as the run record lists them: a request's data only when it is small,
   * so the record stays small however large the requests (big data never leaves SQLite here).
   */
  pendingSummaries(): ApprovalSummary[] {
    return this.sql
      .exec<RawSummary>(
        `SELECT request_id, state, requested_seq, created_at, expires_at, length(CAST(data AS BLOB)) AS bytes,
                CASE WHEN length(CAST(data AS BLOB)) <= ? THEN data END AS data
         FROM approvals WHERE state = 'pending' ORDER BY requested_seq`,
        APPROVAL_SUMMARY_DATA_BYTES,
      )
      .toArray()
      .map((row) => {
        const summary: ApprovalSummary = {
          requestId: row.request_id,
          state: row.state as ApprovalState,
          requestedSeq: row.requested_seq,
          createdAt: iso(row.created_at),
          bytes: row.bytes,
          truncated: row.data === null,
          data: row.data === null ? null : JSON.parse(row.data),
        };
        if (row.expires_at !== null) summary.expiresAt = iso(row.expires_at);
        return summary;
      });
  }
}
