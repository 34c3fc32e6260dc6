import { describe, expect, test } from "vitest";
import { useEdge } from "./harness/edge.ts";
import { ESC, screen, startInPty } from "./harness/pty.ts";
import { afterApproval, beforeApproval, expectedTranscript, maskTimes } from "./harness/session.ts";

const edge = useEdge();
const COLUMNS = 140;
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/g;
const SPINNER_CHARS = /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /;

describe("watch on a terminal", () => {
  test("a status line with spinner, status, elapsed time and event count under the streaming transcript", async () => {
    const { run, runner } = await edge.claimedRun({ runId: "tty-1", agent: { name: "test-agent" } });
    const tty = startInPty(edge.url, ["watch", run.id], { columns: COLUMNS, rows: 50 });
    const view = () => screen(tty.output(), COLUMNS);
    await tty.waitForOutput("the status line", () => view().at(-1)?.includes("tty-1 · running") ?? false);

    // A message still streaming sits above the status line and grows in place.
    const session = beforeApproval(run.id);
    await runner.emit(session.slice(0, 4));
    await tty.waitForOutput("the open message line", () =>
      /^\d\d:\d\d:\d\d assistant: Looking at the failing$/.test(view().at(-2) ?? ""),
    );
    expect(view().at(-1)).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] tty-1 · running · \d+s · 6 events$/);

    await runner.emit(session.slice(4));
    await tty.waitForOutput("the approval hint in the status line", () =>
      (view().at(-1) ?? "").endsWith("· awaiting approval: agent-run approve tty-1 r-1"),
    );
    expect(view().at(-1)).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] tty-1 · waiting · \d+s · 23 events · awaiting approval/);
    const spun = new Set(tty.output().match(SPINNER));
    expect(spun.size).toBeGreaterThan(1);

    const approved = await edge.api.request("POST", `/v1/runs/${run.id}/approvals/r-1`, {
      decision: "approve",
      reason: "ok",
    });
    expect(approved.status).toBe(201);
    await runner.ack(await runner.command(), "applied");
    await runner.emit(afterApproval(run.id));
    await runner.complete({ status: "succeeded", exitCode: 0 });
    expect(await tty.waitExit()).toBe(0);

    const final = view();
    expect(maskTimes(final.slice(0, -1))).toEqual(expectedTranscript(run.id).map((l) => l.trimEnd()));
    expect(final.at(-1)).toMatch(/^✔ tty-1 succeeded · \d+s · 31 events$/);
    expect(tty.output()).toContain("\x1b[32mrun finished · succeeded · exit 0\x1b[39m");
  });

  test("NO_COLOR leaves colours out but keeps the status line", async () => {
    await edge.api.createRun({ runId: "tty-2" });
    const tty = startInPty(edge.url, ["watch", "tty-2"], { columns: COLUMNS, rows: 50 }, { env: { NO_COLOR: "1" } });
    await tty.waitForOutput(
      "the status line",
      () => screen(tty.output(), COLUMNS).at(-1)?.includes("tty-2 · queued") ?? false,
    );
    await edge.api.request("POST", "/v1/runs/tty-2/cancel", {});
    expect(await tty.waitExit()).toBe(2);
    expect(tty.output()).not.toMatch(new RegExp(`${ESC}\\[\\d+m`)); // no SGR, only cursor movement
    expect(screen(tty.output(), COLUMNS).at(-1)).toMatch(/^✘ tty-2 cancelled · \d+s · 3 events$/);
  });

  test("Ctrl-C takes the status line away, leaves the transcript, and exits 130", async () => {
    await edge.api.createRun({ runId: "tty-4" });
    const tty = startInPty(edge.url, ["watch", "tty-4"], { columns: COLUMNS, rows: 50 }, { env: { NO_COLOR: "1" } });
    await tty.waitForOutput("the first event above the status line", () => {
      const shown = screen(tty.output(), COLUMNS);
      return (shown.at(-2)?.endsWith("run tty-4 created") && shown.at(-1)?.includes("tty-4 · queued")) ?? false;
    });
    tty.type("\x03");
    expect(await tty.waitExit()).toBe(130);
    expect(screen(tty.output(), COLUMNS)).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d run tty-4 created$/)]);
  });

  test("a streaming message wider than the terminal wraps, and redraws in place as it grows", async () => {
    const { run, runner } = await edge.claimedRun({ runId: "tty-3" });
    const columns = 40;
    const tty = startInPty(edge.url, ["watch", run.id], { columns, rows: 30 }, { env: { NO_COLOR: "1" } });
    await tty.waitForOutput("the claim", () => tty.output().includes("claimed by test-runner"));
    // "HH:MM:SS assistant: " is 20 columns; ten-column deltas reach exactly 40 and 80 along the way.
    const deltas = ["0123456789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst", "KLMNOPQRST", "uvwxyz0123"];
    await runner.emit([{ type: "TEXT_MESSAGE_START", data: { messageId: "m", role: "assistant" } }]);
    let text = "";
    for (const [i, delta] of deltas.entries()) {
      await runner.emit([{ type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m", delta } }]);
      text += delta;
      const rows = (20 + text.length) / columns;
      await tty.waitForOutput(`delta ${i + 1} on screen`, () => {
        const shown = screen(tty.output(), columns);
        const body = shown.slice(-1 - Math.ceil(rows), -1).join("");
        return body.endsWith(text) && SPINNER_CHARS.test(shown.at(-1) ?? "");
      });
    }
    await runner.emit([{ type: "TEXT_MESSAGE_END", data: { messageId: "m" } }]);
    await runner.complete({ status: "succeeded" });
    expect(await tty.waitExit()).toBe(0);
    const final = screen(tty.output(), columns);
    const message = final.findIndex((row) => row.includes("assistant: "));
    expect(final.slice(message, message + 2).join("")).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d assistant: ${text}$`));
    expect(final.slice(message + 2)).toEqual([
      expect.stringMatching(/^\d\d:\d\d:\d\d run finished · succeeded$/),
      expect.stringMatching(/^✔ tty-3 succeeded · \d+s · \d+ events$/),
    ]);
  });
});
