import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestRunner } from "../support/runner-client.ts";
import { waitFor } from "../support/wait.ts";
import { startProxy, type TestProxy } from "../support/proxy.ts";
import { ALPHA, useConsole } from "./harness.ts";
import { conversation, renderedSeqs, showsLog } from "./transcript.ts";

/** The server dies mid-run (kill -9) and comes back on its persisted state; the page carries on. */
/**
 * A front door before the server, standing in for the edge before a deployed worker: a restart
 * behind it drops open connections, but a new one is held (not refused) until the server answers
 * again. So the page sees its socket drop and must reconnect by itself, and the browser never logs
 * a refused connection while the server is down.
 */
let door: TestProxy;
const t = useConsole({ frontDoor: () => door.url });

beforeAll(async () => {
  door = await startProxy(() => t.server.port, { holdMs: 90_000, keepCompression: true });
});
afterAll(async () => {
  await door?.close();
});

describe("server restart", () => {
  it("the page reconnects by itself and the transcript still has every event exactly once", async () => {
    const created = await t.alpha.create("restart-1", { agent: { name: "claude-code" } });
    const [first, second, third] = conversation(1);
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    await runner.send(first ?? []);

    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/restart-1"));
    await page.locator("[data-live='live']").waitFor();
    await waitFor("the first batch on the page", async () => showsLog(page, await t.alpha.events("restart-1")));

    await t.server.crash();
    await page.locator("[data-live='reconnecting']").waitFor();
    await t.server.restart();

    // The runner comes back too, on the epoch it held, and goes on where the edge's ack left it.
    const successor = await TestRunner.connect(t.server.url, "restart-1", created.runnerToken, {
      heldEpoch: runner.epoch,
    });
    t.runners.push(successor);
    await successor.send(second ?? []);
    await page.locator("[data-live='live']").waitFor({ timeout: 60_000 });
    await successor.send(third ?? []);
    await successor.complete({ status: "succeeded", exitCode: 0 });
    await page.locator("[data-live='ended']").waitFor();

    const stored = await t.alpha.events("restart-1");
    expect(stored.filter((event) => event.type === "run.claimed").length).toBe(2);
    await waitFor("the whole stored log on the page", () => showsLog(page, stored));
    expect(await renderedSeqs(page)).toEqual(stored.map((event) => event.seq));
  });
});
