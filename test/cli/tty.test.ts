import { describe, expect, test } from "vitest";
import { useEdge } from "./harness/edge.ts";
import { screen, startInPty } from "./harness/pty.ts";
import { afterApproval, beforeApproval, expectedTranscript, maskTimes } from "./harness/session.ts";

const edge = useEdge();
const COLUMNS = 140;
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/g;

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
    expect(tty.output()).not.toMatch(/\x1b\[\d+m/);
    expect(screen(tty.output(), COLUMNS).at(-1)).toMatch(/^✘ tty-2 cancelled · \d+s · 3 events$/);
  });
});
