import type {
  ApprovalBody,
  ApprovalRecord,
  CancelBody,
  CommandBody,
  CommandRecord,
  ErrorBody,
  EventsPage,
  RecoverAccepted,
  RecoverBody,
  RunEvent,
  RunRecord,
  RunsPage,
  TokenBody,
  PoolHostInfo,
  QueueInfo,
} from "../../src/protocol/index.ts";
import type { Credential } from "./session.ts";

export type { EventsPage, RunListing, RunsPage } from "../../src/protocol/index.ts";

/** A refusal from the API (`{error: {code, message}}` plus extra fields), or `network` when unreachable. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly extra: Record<string, unknown>;
  constructor(status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
  }
}

function errorOf(status: number, body: unknown, statusText: string): ApiError {
  const error = (body as Partial<ErrorBody> | null)?.error;
  const extra = typeof body === "object" && body !== null ? { ...(body as Record<string, unknown>) } : {};
  delete extra.error;
  return new ApiError(
    status,
    error?.code ?? `http_${status}`,
    error?.message ?? (statusText || "request failed"),
    extra,
  );
}

const path = (runId: string) => `/v1/runs/${encodeURIComponent(runId)}`;

/** The HTTPS API as the console uses it, with one credential. */
export class Api {
  readonly credential: Credential;
  constructor(credential: Credential) {
    this.credential = credential;
  }

  async call<T>(method: string, route: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.credential.secret}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(route, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        cache: "no-store",
      });
    } catch {
      throw new ApiError(0, "network", "The server could not be reached.");
    }
    const text = await res.text().catch(() => "");
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!res.ok) throw errorOf(res.status, parsed, res.statusText);
    return parsed as T;
  }

  listRuns(query: {
    status?: string;
    tags?: string[];
    meta?: [string, string][];
    createdAfter?: string;
    createdBefore?: string;
    cursor?: string;
    limit: number;
  }): Promise<RunsPage> {
    const params = new URLSearchParams({ limit: String(query.limit) });
    if (query.status) params.set("status", query.status);
    for (const tag of query.tags ?? []) params.append("tag", tag);
    for (const [key, value] of query.meta ?? []) params.append(`meta.${key}`, value);
    if (query.createdAfter) params.set("createdAfter", query.createdAfter);
    if (query.createdBefore) params.set("createdBefore", query.createdBefore);
    if (query.cursor) params.set("cursor", query.cursor);
    return this.call("GET", `/v1/runs?${params}`);
  }

  getRun(runId: string): Promise<RunRecord> {
    return this.call("GET", path(runId));
  }

  events(runId: string, after: number, limit: number): Promise<EventsPage> {
    return this.call("GET", `${path(runId)}/events?after=${after}&limit=${limit}`);
  }

  command(runId: string, body: CommandBody): Promise<{ created: boolean; command: CommandRecord }> {
    return this.call("POST", `${path(runId)}/commands`, body);
  }

  approve(
    runId: string,
    requestId: string,
    body: ApprovalBody,
  ): Promise<{ created: boolean; approval: ApprovalRecord }> {
    return this.call("POST", `${path(runId)}/approvals/${encodeURIComponent(requestId)}`, body);
  }

  /** One approval with its full request (the run record's summaries leave large ones out). */
  approval(runId: string, requestId: string): Promise<ApprovalRecord> {
    return this.call("GET", `${path(runId)}/approvals/${encodeURIComponent(requestId)}`);
  }

  cancel(runId: string, body: CancelBody): Promise<{ created: boolean; command: CommandRecord | null; run: unknown }> {
    return this.call("POST", `${path(runId)}/cancel`, body);
  }

  recover(runId: string, body: RecoverBody): Promise<RecoverAccepted> {
    return this.call("POST", `${path(runId)}/recover`, body);
  }

  rerun(runId: string): Promise<{ run: RunRecord; runnerToken: string; viewerToken: string }> {
    return this.call("POST", `${path(runId)}/rerun`, {});
  }

  reruns(runId: string): Promise<{ rerunOf: string | null; reruns: string[] }> {
    return this.call("GET", `${path(runId)}/reruns`);
  }

  mintToken(runId: string, body: TokenBody): Promise<{ token: string; role: string; interact: boolean }> {
    return this.call("POST", `${path(runId)}/tokens`, body);
  }

  /** The tenant's connected pool hosts (API key only). */
  pools(): Promise<{ hosts: PoolHostInfo[] }> {
    return this.call("GET", "/v1/pools");
  }

  queues(): Promise<{ queues: QueueInfo[] }> {
    return this.call("GET", "/v1/queues");
  }

  /** Every event of the run, page by page (for the NDJSON download). */
  async *allEvents(runId: string): AsyncGenerator<RunEvent[]> {
    let after = 0;
    for (;;) {
      const page = await this.events(runId, after, 500);
      if (page.events.length > 0) yield page.events;
      if (!page.hasMore) return;
      after = page.nextAfter;
    }
  }
}

/** A fresh id for a command, so a retried click never runs it twice. */
export function newCommandId(prefix: string): string {
  const random =
    typeof crypto.randomUUID === "function"
      ? crypto.randomUUID()
      : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `console-${prefix}-${random}`;
}
