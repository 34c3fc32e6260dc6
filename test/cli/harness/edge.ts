import { afterAll, afterEach, beforeAll } from "vitest";
import type { RunEvent, RunRecord } from "../../../src/protocol/index.ts";
import { waitFor } from "../../support/wait.ts";
import { type DevServer, startWranglerDev } from "../../support/wrangler-dev.ts";
import { KEY, killLeftovers } from "./cli.ts";
import { TestRunner } from "./runner.ts";

export interface Created {
  run: RunRecord;
  runnerToken: string;
  viewerToken: string;
}

/** The HTTP API as the tests check it (tenant alpha), independent of the CLI under test. */
export class Api {
  readonly url: string;
  constructor(url: string) {
    this.url = url;
  }

  async request(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(this.url + route, {
      method,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  async createRun(body: Record<string, unknown> = {}): Promise<Created> {
    const res = await this.request("POST", "/v1/runs", body);
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as Created;
  }

  async getRun(runId: string): Promise<RunRecord> {
    const res = await this.request("GET", `/v1/runs/${runId}`);
    if (res.status !== 200) throw new Error(`get answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as RunRecord;
  }

  /** The whole stored log, every page. */
  async events(runId: string): Promise<RunEvent[]> {
    const out: RunEvent[] = [];
    let after = 0;
    for (;;) {
      const res = await this.request("GET", `/v1/runs/${runId}/events?after=${after}&limit=500`);
      if (res.status !== 200) throw new Error(`events answered ${res.status}: ${JSON.stringify(res.body)}`);
      out.push(...res.body.events);
      if (!res.body.hasMore) return out;
      after = res.body.nextAfter;
    }
  }

  async waitForStatus(runId: string, status: string, timeoutMs = 30_000): Promise<RunRecord> {
    return waitFor(
      `run ${runId} to be ${status}`,
      async () => {
        const run = await this.getRun(runId);
        return run.status === status ? run : null;
      },
      timeoutMs,
    );
  }
}

export interface EdgeContext {
  url: string;
  api: Api;
  /** kill -9 of the server; its state stays for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same state. */
  start(): Promise<void>;
  /** Creates a run and claims it with a test runner. */
  claimedRun(body?: Record<string, unknown>): Promise<Created & { runner: TestRunner }>;
}

/** One real `wrangler dev` per file, which a test may crash and start again on its state. */
export function useEdge(): EdgeContext {
  let dev: DevServer | undefined;
  const runners: TestRunner[] = [];
  const ctx = {
    stop: () => dev?.crash() ?? Promise.resolve(),
    start: () => dev?.restart() ?? Promise.resolve(),
    async claimedRun(body: Record<string, unknown> = {}) {
      const created = await ctx.api.createRun(body);
      const runner = new TestRunner(ctx.url, created.run.id, created.runnerToken);
      runners.push(runner);
      await runner.claim();
      return { ...created, runner };
    },
  } as EdgeContext;
  beforeAll(async () => {
    dev = await startWranglerDev();
    ctx.url = dev.url;
    ctx.api = new Api(dev.url);
  });
  afterEach((context) => {
    for (const runner of runners.splice(0)) runner.close();
    killLeftovers();
    // A failure may be the server's doing: show what it said.
    if (context.task.result?.state === "fail") console.error(`wrangler dev output:\n${dev?.output().slice(-3000)}`);
  });
  afterAll(async () => {
    await dev?.stop();
  });
  return ctx;
}
