import { afterAll, afterEach, beforeAll } from "vitest";
import { Api, type CreatedRun } from "../../support/api.ts";
import { type DevServer, startWranglerDev } from "../../support/wrangler-dev.ts";
import { killLeftovers } from "./cli.ts";
import { TestRunner } from "./runner.ts";

export interface EdgeContext {
  url: string;
  api: Api;
  /** kill -9 of the server; its state stays for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same state. */
  start(): Promise<void>;
  /** Creates a run and claims it with a test runner. */
  claimedRun(body?: Record<string, unknown>): Promise<CreatedRun & { runner: TestRunner }>;
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
