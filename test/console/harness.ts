import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { RunEvent, RunRecord } from "../../src/protocol/index.ts";
import { TestRunner } from "../support/runner-client.ts";
import { type DevServer, startWranglerDev } from "../support/wrangler-dev.ts";
import { type ConsoleBrowser, closePages, launchBrowser } from "./browser.ts";

export const ALPHA = "dev-key-alpha";
export const BETA = "dev-key-beta";

export interface Created {
  run: RunRecord;
  runnerToken: string;
  viewerToken: string;
}

/** The HTTP API as one tenant's operator calls it from the test. */
export class TenantApi {
  readonly base: () => string;
  readonly key: string;
  constructor(base: () => string, key: string) {
    this.base = base;
    this.key = key;
  }

  async call<T = any>(
    method: string,
    route: string,
    body?: unknown,
    credential = this.key,
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(this.base() + route, {
      method,
      headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  }

  async ok<T = any>(method: string, route: string, body?: unknown): Promise<T> {
    const res = await this.call<T>(method, route, body);
    if (res.status < 200 || res.status > 299)
      throw new Error(`${method} ${route} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** A run with a long lease, so a slow machine never stalls it by accident. */
  create(runId: string, body: Record<string, unknown> = {}): Promise<Created> {
    return this.ok("POST", "/v1/runs", { runId, timeouts: { heartbeatMs: 600_000 }, ...body });
  }

  async events(runId: string): Promise<RunEvent[]> {
    const all: RunEvent[] = [];
    for (let after = 0; ; ) {
      const page = await this.ok("GET", `/v1/runs/${runId}/events?after=${after}&limit=500`);
      all.push(...page.events);
      if (!page.hasMore) return all;
      after = page.nextAfter;
    }
  }

  async runner(created: Created): Promise<TestRunner> {
    return TestRunner.connect(this.base(), created.run.id, created.runnerToken);
  }
}

export interface ConsoleContext {
  server: DevServer;
  browser: ConsoleBrowser;
  alpha: TenantApi;
  beta: TenantApi;
  /** The URL the browser opens (the server, or a front door before it). */
  url(path?: string): string;
  /** This test expects the browser to log these HTTP refusals (a fetch answered 4xx logs one). */
  expectRefusals(...statuses: number[]): void;
  runners: TestRunner[];
}

const REFUSAL = /^Failed to load resource: the server responded with a status of (\d{3})/;

/**
 * One real `wrangler dev` and one chromium per file. After every test its pages are closed and
 * must have thrown nothing and logged no console error, except the HTTP refusals it declared.
 */
export function useConsole(options: { frontDoor?: () => string } = {}): ConsoleContext {
  let refusals = new Set<number>();
  const ctx = {
    runners: [] as TestRunner[],
    url(path = "/") {
      return (options.frontDoor?.() ?? ctx.server.url) + path;
    },
    expectRefusals(...statuses: number[]) {
      refusals = new Set(statuses);
    },
  } as ConsoleContext;
  beforeAll(async () => {
    const [server, browser] = await Promise.all([startWranglerDev(), launchBrowser()]);
    ctx.server = server;
    ctx.browser = browser;
    ctx.alpha = new TenantApi(() => ctx.server.url, ALPHA);
    ctx.beta = new TenantApi(() => ctx.server.url, BETA);
  });
  afterEach(async () => {
    for (const runner of ctx.runners.splice(0)) runner.close();
    const { pageErrors, consoleErrors } = await closePages(ctx.browser);
    const unexpected = consoleErrors.filter((line) => {
      const status = REFUSAL.exec(line.slice(line.indexOf(": ") + 2))?.[1];
      return !(status && refusals.has(Number(status)));
    });
    refusals = new Set();
    expect(pageErrors, "uncaught errors in the page").toEqual([]);
    expect(unexpected, "console errors in the page").toEqual([]);
  });
  afterAll(async () => {
    await ctx.browser?.close();
    await ctx.server?.stop();
  });
  return ctx;
}
