import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { type PoolHostProcess, marker, startPoolHost, touch } from "../pools/harness.ts";
import { waitFor } from "../support/wait.ts";
import { screenshot } from "./browser.ts";
import { ALPHA, useConsole } from "./harness.ts";

/** The console's pool views, in real chromium against a real `wrangler dev` and real pool hosts. */
const t = useConsole();

async function withHosts(count: number, test: (hosts: PoolHostProcess[]) => Promise<void>): Promise<void> {
  const { key } = await t.alpha.ok<{ key: string }>("POST", "/v1/pool-keys", {});
  const hosts = Array.from({ length: count }, () => startPoolHost(t.server.url, { key, slots: 2 }));
  try {
    await test(hosts);
  } finally {
    for (const host of hosts) await host.destroy();
  }
}

const prompt = (steps: unknown[]) => ({ prompt: JSON.stringify(steps) });

describe("pools in the console", () => {
  it("the Pools page lists each host's slots and runs and the queues; the runs list shows host and queue position", async () => {
    await withHosts(1, async ([host]) => {
      const hostId = await (host as PoolHostProcess).hostId();
      const started = marker("started");
      const held = await t.alpha.create("pool-held", {
        agent: "scripted",
        input: prompt([{ touch: started }, { waitFile: marker("never") }]),
      });
      await t.alpha.create("pool-waiting", { agent: "unserved", input: { prompt: "hi" } });
      await waitFor("the held run's agent to start", () => fs.existsSync(started), 30_000);

      const { page } = await t.browser.open({ apiKey: ALPHA });
      await page.goto(t.url("/"));
      await page.locator('tr[data-run-id="pool-held"] td[data-host] code').waitFor({ timeout: 15_000 });
      expect(await page.locator('tr[data-run-id="pool-held"] td[data-host]').textContent()).toBe(hostId);
      const waiting = page.locator('tr[data-run-id="pool-waiting"] td[data-queue-position]');
      await waitFor("the waiting run's position and reason", async () =>
        /^1no connected pool host serves profile "unserved"/.test((await waiting.textContent()) ?? ""),
      );

      await page.getByRole("link", { name: "Pools" }).click();
      const row = page.locator(`tr[data-host-id="${hostId}"]`);
      await row.waitFor({ timeout: 10_000 });
      expect(await row.locator("td[data-slots]").textContent()).toBe("1 of 2 busy");
      expect(await row.locator("a").allTextContents()).toEqual([held.run.id]);
      expect(await page.locator('tr[data-queue="default"] td').allTextContents()).toEqual(["1", "1", "none", "1", "1"]);
      expect(page.url()).toBe(t.url("/pools"));
      await screenshot(page, "pools-page");
      await page.locator(`tr[data-host-id="${hostId}"] a`).click();
      await page.locator('[data-fact="pool-host"] code').waitFor();
      expect(await page.locator('[data-fact="pool-host"] code').textContent()).toBe(hostId);
      expect(await page.locator('[data-fact="queue"]').textContent()).toBe("Queuedefault");
      await t.alpha.ok("POST", "/v1/runs/pool-held/cancel", {});
      await t.alpha.ok("POST", "/v1/runs/pool-waiting/cancel", {});
    });
  });

  it("the run page shows an automatic recovery as a timeline row", async () => {
    await withHosts(1, async ([first]) => {
      await (first as PoolHostProcess).hostId();
      const started = marker("started");
      const goOn = marker("go-on");
      await t.alpha.create("pool-recovered", {
        agent: "scripted",
        input: prompt([{ touch: started }, { waitFile: goOn }, { out: "done" }]),
        timeouts: { heartbeatMs: 2000, takeoverMs: 300 },
      });
      await waitFor("the agent to start", () => fs.existsSync(started), 30_000);
      await withHosts(1, async ([second]) => {
        await (second as PoolHostProcess).hostId();
        await (first as PoolHostProcess).destroy();
        touch(goOn);
        await t.alpha.waitForStatus("pool-recovered", "succeeded", 60_000);
        const { page } = await t.browser.open({ apiKey: ALPHA });
        await page.goto(t.url("/runs/pool-recovered"));
        const row = page.locator("li", { hasText: "Automatic recovery 1 of 3 · restart" });
        await row.waitFor({ timeout: 15_000 });
        expect(await page.locator('[data-fact="recovery-policy"]').textContent()).toBe(
          "Recoveryautomatic, 1 of 3 used",
        );
      });
    });
  });
});
