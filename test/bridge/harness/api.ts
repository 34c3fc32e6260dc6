import fs from "node:fs";
import path from "node:path";
import type { RunEvent, RunRecord } from "../../../src/protocol/index.ts";
import { REPO } from "./edge.ts";

const API_KEY = "dev-key-alpha";

export interface CreatedRun {
  run: RunRecord;
  runnerToken: string;
  viewerToken: string;
}

/** The control-plane HTTP API as a controller uses it (tenant alpha). */
export class Api {
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  async request(method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(this.base + route, {
      method,
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed };
  }

  private async expect<T>(method: string, route: string, status: number, body?: unknown): Promise<T> {
    const res = await this.request(method, route, body);
    if (res.status !== status) {
      throw new Error(`${method} ${route} answered ${res.status} (expected ${status}): ${JSON.stringify(res.body)}`);
    }
    return res.body as T;
  }

  createRun(body: Record<string, unknown> = {}): Promise<CreatedRun> {
    return this.expect<CreatedRun>("POST", "/v1/runs", 201, body);
  }

  getRun(runId: string): Promise<RunRecord> {
    return this.expect<RunRecord>("GET", `/v1/runs/${runId}`, 200);
  }

  async events(runId: string): Promise<RunEvent[]> {
    const out: RunEvent[] = [];
    let after = 0;
    for (;;) {
      const page = await this.expect<{ events: RunEvent[]; hasMore: boolean; nextAfter: number }>(
        "GET",
        `/v1/runs/${runId}/events?after=${after}&limit=500`,
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

  async command(runId: string, body: { commandId: string; type: "input" | "interrupt" | "cancel"; text?: string }) {
    const res = await this.request("POST", `/v1/runs/${runId}/commands`, body);
    if (res.status < 200 || res.status >= 300)
      throw new Error(`command answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async approve(runId: string, requestId: string, decision: "approve" | "deny", reason?: string) {
    const res = await this.request(
      "POST",
      `/v1/runs/${runId}/approvals/${requestId}`,
      reason ? { decision, reason } : { decision },
    );
    if (res.status < 200 || res.status >= 300)
      throw new Error(`approval answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async cancel(runId: string) {
    const res = await this.request("POST", `/v1/runs/${runId}/cancel`, {});
    if (res.status < 200 || res.status >= 300)
      throw new Error(`cancel answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

/** TOKEN_SECRET from .dev.vars (to mint a runner token for a run that does not exist). */
export function devTokenSecret(): string {
  const text = fs.readFileSync(path.join(REPO, ".dev.vars"), "utf8");
  const match = /^TOKEN_SECRET="?([^"\n]+)"?/m.exec(text);
  if (!match?.[1]) throw new Error("no TOKEN_SECRET in .dev.vars");
  return match[1];
}
