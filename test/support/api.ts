import fs from "node:fs";
import path from "node:path";
import type { CreatedRun, RunEvent, RunRecord } from "../../src/protocol/index.ts";
import { waitFor } from "./wait.ts";
import { REPO } from "./wrangler-dev.ts";

export type { CreatedRun };

/** The dev tenants' API keys (.dev.vars). */
export const ALPHA = "dev-key-alpha";
export const BETA = "dev-key-beta";

/**
 * The control plane's HTTP API as a tenant's operator calls it from a test (tenant alpha unless
 * told otherwise), independent of any client under test. `base` is a function for a server whose
 * address changes.
 */
export class Api {
  readonly key: string;
  private readonly baseUrl: () => string;

  constructor(base: string | (() => string), key = ALPHA) {
    this.baseUrl = typeof base === "string" ? () => base : base;
    this.key = key;
  }

  get base(): string {
    return this.baseUrl();
  }

  /** Any answer; its body parsed where it is JSON, else its text (null when empty). */
  async request<T = any>(
    method: string,
    route: string,
    body?: unknown,
    credential = this.key,
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(this.base + route, {
      method,
      headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    });
    return { status: res.status, body: parsed(await res.text()) as T };
  }

  /** The body of a success (2xx); any other answer throws, naming the request. */
  ok<T = any>(method: string, route: string, body?: unknown): Promise<T> {
    return this.answered<T>(method, route, body, "2xx");
  }

  createRun(body: Record<string, unknown> = {}): Promise<CreatedRun> {
    return this.answered("POST", "/v1/runs", body, 201);
  }

  getRun(runId: string): Promise<RunRecord> {
    return this.answered("GET", `/v1/runs/${runId}`, undefined, 200);
  }

  /** The whole stored log, every page. */
  async events(runId: string): Promise<RunEvent[]> {
    const out: RunEvent[] = [];
    for (let after = 0; ; ) {
      const page = await this.answered<{ events: RunEvent[]; hasMore: boolean; nextAfter: number }>(
        "GET",
        `/v1/runs/${runId}/events?after=${after}&limit=500`,
        undefined,
        200,
      );
      out.push(...page.events);
      if (!page.hasMore) return out;
      after = page.nextAfter;
    }
  }

  /** The runner-sourced events, as `{sourceSeq, type, data}` for exact comparison. */
  async runnerEvents(runId: string): Promise<{ sourceSeq: number | undefined; type: string; data: unknown }[]> {
    return (await this.events(runId))
      .filter((e) => e.source === "runner")
      .map((e) => ({ sourceSeq: e.sourceSeq, type: e.type, data: e.data }));
  }

  waitForStatus(runId: string, status: string, timeoutMs = 30_000): Promise<RunRecord> {
    return waitFor(
      `run ${runId} to be ${status}`,
      async () => {
        const run = await this.getRun(runId);
        return run.status === status ? run : null;
      },
      timeoutMs,
    );
  }

  command(runId: string, body: { commandId: string; type: "input" | "interrupt" | "cancel"; text?: string }) {
    return this.ok("POST", `/v1/runs/${runId}/commands`, body);
  }

  approve(runId: string, requestId: string, decision: "approve" | "deny", reason?: string) {
    return this.ok("POST", `/v1/runs/${runId}/approvals/${requestId}`, reason ? { decision, reason } : { decision });
  }

  cancel(runId: string) {
    return this.ok("POST", `/v1/runs/${runId}/cancel`, {});
  }

  private async answered<T>(method: string, route: string, body: unknown, expected: number | "2xx"): Promise<T> {
    const res = await this.request<T>(method, route, body);
    const fits = expected === "2xx" ? res.status >= 200 && res.status <= 299 : res.status === expected;
    if (!fits) {
      throw new Error(`${method} ${route} answered ${res.status} (expected ${expected}): ${JSON.stringify(res.body)}`);
    }
    return res.body;
  }
}

function parsed(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** TOKEN_SECRET from .dev.vars (to mint a token for a run that does not exist). */
export function devTokenSecret(): string {
  const text = fs.readFileSync(path.join(REPO, ".dev.vars"), "utf8");
  const match = /^TOKEN_SECRET="?([^"\n]+)"?/m.exec(text);
  if (!match?.[1]) throw new Error("no TOKEN_SECRET in .dev.vars");
  return match[1];
}
