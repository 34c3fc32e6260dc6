import fs from "node:fs";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { waitFor } from "../support/wait.ts";
import { ALPHA, statusBadge, useConsole } from "./harness.ts";
import { comparable, conversation, expectedRows, renderedRows, renderedSeqs, showsLog } from "./transcript.ts";

/** A run page following a live run: the transcript, permalinks, filters, the download. */
const t = useConsole();

const seqsOf = (events: RunEvent[]) => events.map((event) => event.seq);

describe("run page, live", () => {
  it("shows a streaming run live, in order, each event once, as the stored log renders", async () => {
    const created = await t.alpha.create("live-1", { agent: { name: "codex" }, input: { prompt: "fix the tests" } });
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/live-1"));
    await page.locator("[data-live='live']").waitFor();

    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    for (const batch of conversation(1)) {
      await runner.send(batch);
      const stored = await t.alpha.events("live-1");
      // Live: each batch shows up without a reload, rendered as the stored log renders.
      await waitFor(`the page to show events 1..${stored.length} as stored`, () => showsLog(page, stored), 15_000);
    }
    await runner.complete({ status: "succeeded", exitCode: 0 });
    await page.locator("[data-live='ended']").waitFor();
    await statusBadge(page, "Succeeded");

    const stored = await t.alpha.events("live-1");
    expect(await renderedSeqs(page)).toEqual(seqsOf(stored));
    expect(comparable(await renderedRows(page))).toEqual(comparable(expectedRows(stored)));
    // The one message assembled from deltas, the error highlighted, the unknown type as raw JSON.
    await expect(page.locator("li.kind-message .message-text").first().textContent()).resolves.toBe(
      "Looking at the failing tests first; then I will fix them.",
    );
    await expect(page.locator("li.kind-error").textContent()).resolves.toContain("rate limited; retrying in 2 s");
    await expect(
      page.locator("li.kind-raw", { hasText: "SOMETHING_NEW" }).locator(".raw-inline").textContent(),
    ).resolves.toContain('"unknown"');
  });

  it("a frame lost on the way is refetched through /events: no gap, nothing twice", async () => {
    const created = await t.alpha.create("gap-1");
    const { page } = await t.browser.open({ apiKey: ALPHA });
    // Drop the first frame that carries agent events, as a lossy path between edge and browser would.
    let dropped = 0;
    await page.routeWebSocket(/\/v1\/runs\/gap-1\/watch/, (socket) => {
      const server = socket.connectToServer();
      server.onMessage((message) => {
        const frame = JSON.parse(String(message)) as { type: string; events?: RunEvent[] };
        if (dropped === 0 && frame.events?.some((event) => event.source === "runner")) {
          dropped = frame.events.length;
          return;
        }
        socket.send(message);
      });
    });
    await page.goto(t.url("/runs/gap-1"));
    await page.locator("[data-live='live']").waitFor();
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    const [first, second] = conversation(2);
    await runner.send(first ?? []);
    await waitFor("the proxy to drop a frame", () => dropped > 0);
    await runner.send(second ?? []);
    const stored = await t.alpha.events("gap-1");
    await waitFor("the page to fill the gap and show the stored log", () => showsLog(page, stored), 15_000);
    expect(await renderedSeqs(page)).toEqual(seqsOf(stored));
  });

  it("filters by kind and searches, by keyboard", async () => {
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/live-1"));
    await page.locator("[data-live='ended']").waitFor();
    const all = await renderedRows(page);

    await page.locator("button[data-category='tools']").focus();
    await page.keyboard.press("Space");
    await waitFor("tool rows to be hidden", async () => (await renderedRows(page)).every((row) => row.kind !== "tool"));
    expect((await renderedRows(page)).length).toBe(all.length - all.filter((row) => row.kind === "tool").length);
    await page.getByRole("button", { name: "All", exact: true }).press("Enter");
    await waitFor("every row back", async () => (await renderedRows(page)).length === all.length);

    await page.getByPlaceholder("Search", { exact: true }).focus();
    await page.keyboard.type("42 tests pass");
    await waitFor("one matching row", async () => (await renderedRows(page)).length === 1);
    expect((await renderedRows(page))[0]?.text).toBe("All 42 tests pass now.");
  });

  it("a permalink scrolls to its event and highlights it; Link puts one in the address bar", async () => {
    const stored = await t.alpha.events("live-1");
    const target = stored.find((event) => event.type === "TOOL_CALL_ARGS") as RunEvent;
    const { page } = await t.browser.open({ apiKey: ALPHA, viewport: { width: 1280, height: 600 } });
    await page.goto(t.url(`/runs/live-1#seq=${target.seq}`));
    const highlighted = page.locator("li.row.is-target");
    await highlighted.waitFor();
    expect((await highlighted.getAttribute("data-seqs"))?.split(",").map(Number)).toContain(target.seq);
    const box = await highlighted.boundingBox();
    const view = await page.locator(".transcript-scroll").boundingBox();
    expect(box && view && box.y >= view.y && box.y + Math.min(box.height, 40) <= view.y + view.height).toBe(true);

    const other = stored.find((event) => event.type === "RUN_ERROR") as RunEvent;
    await page.getByRole("button", { name: `Copy link to event ${other.seq}` }).click();
    await waitFor("the address bar to carry the permalink", () => page.url().endsWith(`#seq=${other.seq}`));
    await expect(page.locator("li.row.is-target").getAttribute("data-seqs")).resolves.toBe(String(other.seq));
  });

  it("downloads the whole transcript as NDJSON, identical to the stored log", async () => {
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url("/runs/live-1"));
    await page.locator("[data-live='ended']").waitFor();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download NDJSON" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("live-1.ndjson");
    const text = fs.readFileSync(await download.path(), "utf8");
    const lines = text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as RunEvent);
    expect(lines).toEqual(await t.alpha.events("live-1"));
  });
});
