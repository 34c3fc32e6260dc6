import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { ALPHA, Api, BETA, type CreatedRun } from "../support/api.ts";
import { TestRunner } from "../support/runner-client.ts";
import { waitFor } from "../support/wait.ts";
import { type DevServer, startWranglerDev } from "../support/wrangler-dev.ts";
import { type ConsoleBrowser, closePages, launchBrowser } from "./browser.ts";

export { ALPHA, BETA };

/** The HTTP API as one tenant's operator calls it from the test. */
export class TenantApi extends Api {
  /** A run with a long lease, so a slow machine never stalls it by accident. */
  create(runId: string, body: Record<string, unknown> = {}): Promise<CreatedRun> {
    return this.ok("POST", "/v1/runs", { runId, timeouts: { heartbeatMs: 600_000 }, ...body });
  }

  async runner(created: CreatedRun): Promise<TestRunner> {
    return TestRunner.connect(this.base, created.run.id, created.runnerToken);
  }
}

/**
 * Waits until the run header's status badge reads `label`. The badge follows the run record,
 * which the page reads again after each control event, so it may lag the event by a read.
 */
export async function statusBadge(page: Page, label: string, timeoutMs = 10_000): Promise<void> {
  const badge = page.locator(".run-header .badge").first();
  await waitFor(
    `the status badge to read "${label}"`,
    async () => {
      const shown = await badge.textContent();
      if (shown !== label) throw new Error(`it reads "${shown}"`);
      return true;
    },
    timeoutMs,
  );
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
