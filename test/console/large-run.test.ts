import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import type { AgentEvent } from "../support/runner-client.ts";
import { waitFor } from "../support/wait.ts";
import { ALPHA, useConsole } from "./harness.ts";
import { comparable, expectedRows, renderedRows } from "./transcript.ts";

/** A 50,000-event run opens on its latest events and loads earlier pages as the reader scrolls back. */
const t = useConsole();

const EVENTS = 50_000;
const FRAME = 500;
/** The console's DOM window (console/src/transcript/view.tsx WINDOW). */
const DOM_ROWS_MAX = 200;

/** Ten events a cycle: a message, a tool call, a step, a custom event (four rows). */
function cycle(n: number): AgentEvent[] {
  const m = `m${n}`;
  const c = `c${n}`;
  return [
    { type: "TEXT_MESSAGE_START", data: { messageId: m, role: "assistant" } },
    { type: "TEXT_MESSAGE_CONTENT", data: { messageId: m, delta: `Step ${n}: ` } },
    { type: "TEXT_MESSAGE_CONTENT", data: { messageId: m, delta: "checking the next file." } },
    { type: "TEXT_MESSAGE_END", data: { messageId: m } },
    { type: "TOOL_CALL_START", data: { toolCallId: c, toolCallName: "read_file" } },
    { type: "TOOL_CALL_ARGS", data: { toolCallId: c, delta: `{"path":"src/file-${n}.ts"}` } },
    { type: "TOOL_CALL_END", data: { toolCallId: c } },
    { type: "TOOL_CALL_RESULT", data: { toolCallId: c, messageId: `${c}-r`, content: `${n} lines` } },
    { type: "STEP_FINISHED", data: { stepName: `step-${n}` } },
    { type: "CUSTOM", data: { name: "progress", value: { step: n } } },
  ];
}

const seqsShown = async (page: import("playwright-core").Page) =>
  (await renderedRows(page)).flatMap((row) => row.seqs).sort((a, b) => a - b);

async function storedRange(from: number, to: number): Promise<RunEvent[]> {
  const page = await t.alpha.ok("GET", `/v1/runs/big-1/events?after=${from - 1}&limit=${Math.min(500, to - from + 1)}`);
  return page.events;
}

describe("large runs", () => {
  it("a 50,000-event run shows its latest event first, keeps a bounded DOM, and loads earlier pages on scroll", async () => {
    const created = await t.alpha.create("big-1", { agent: { name: "codex" } });
    const runner = await t.alpha.runner(created);
    t.runners.push(runner);
    const seedStart = Date.now();
    for (let frame = 0; frame < EVENTS / FRAME; frame++) {
      const events: AgentEvent[] = [];
      for (let n = frame * (FRAME / 10); n < (frame + 1) * (FRAME / 10); n++) events.push(...cycle(n));
      await runner.send(events, FRAME);
    }
    const lastSeq = (await t.alpha.ok("GET", "/v1/runs/big-1")).lastSeq as number;
    expect(lastSeq).toBe(EVENTS + 2); // run.created and run.claimed come first
    console.log(`[console] seeded ${EVENTS} events in ${EVENTS / FRAME} frames in ${Date.now() - seedStart} ms`);

    const { page } = await t.browser.open({ apiKey: ALPHA });
    const opened = Date.now();
    await page.goto(t.url("/runs/big-1"));
    await page.locator(`li.row[data-seqs="${lastSeq}"]`).waitFor({ timeout: 60_000 });
    const openMs = Date.now() - opened;
    console.log(`[console] 50,000-event run: latest event on screen ${openMs} ms after navigation`);
    await page.locator("[data-live='live']").waitFor();

    const initial = await seqsShown(page);
    expect(initial[initial.length - 1]).toBe(lastSeq);
    expect(initial[0]).toBeGreaterThan(lastSeq - 500); // only the latest page was loaded
    expect(await page.locator("li.row").count()).toBeLessThanOrEqual(DOM_ROWS_MAX);

    // Scroll back until three earlier pages are in, the DOM still bounded all the way.
    const scroller = page.locator(".transcript-scroll");
    const goal = lastSeq - 4 * 500;
    await waitFor(
      `rows before seq ${goal} after scrolling back`,
      async () => {
        await scroller.evaluate((el) => {
          el.scrollTop = 0;
        });
        const count = await page.locator("li.row").count();
        if (count > DOM_ROWS_MAX) throw new Error(`${count} rows in the DOM`);
        return (await seqsShown(page))[0]! < goal;
      },
      60_000,
      200,
    );
    const window = await renderedRows(page);
    const seqs = window.flatMap((row) => row.seqs);
    const stored = await storedRange(Math.min(...seqs), Math.max(...seqs));
    expect(comparable(window)).toEqual(comparable(expectedRows(stored)));
    expect(await page.locator("li.row").count()).toBeLessThanOrEqual(DOM_ROWS_MAX);

    // Jump to latest brings the tail back.
    await page.getByRole("button", { name: /Jump to latest/ }).click();
    await page.locator(`li.row[data-seqs="${lastSeq}"]`).waitFor();
  });
});
