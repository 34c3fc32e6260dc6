import { describe, expect, test } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { cli, expectExit, ndjson, startCli } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";
import { ESC, screen, startInPty } from "./harness/pty.ts";
import type { AgentEvent } from "./harness/runner.ts";

const edge = useEdge();
const COLUMNS = 160;

// What a compromised agent prints: OSC 52 (sets the clipboard), a CSI cursor-up plus erase-line
// (hides the line above), the one-byte C1 CSI, a bare CR (overwrites the line) and a BEL.
const OSC52 = `${ESC}]52;c;cm0gLXJmIH4=\x07`;
const HIDE = `${ESC}[1A${ESC}[2K`;
const C1 = "\u009b2J";
const HOSTILE = `clipboard ${OSC52} hide ${HIDE} c1 ${C1} cr fake prompt\rOK`;
const SHOWN = "clipboard \\x1b]52;c;cm0gLXJmIH4=\\x07 hide \\x1b[1A\\x1b[2K c1 \\x9b2J cr fake prompt\\rOK";

function hostileSession(runId: string): AgentEvent[] {
  return [
    { type: "RUN_STARTED", data: { threadId: "t-1", runId } },
    { type: "TEXT_MESSAGE_START", data: { messageId: "m-1", role: "assistant" } },
    { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m-1", delta: `${HOSTILE}\n` } },
    { type: "TEXT_MESSAGE_END", data: { messageId: "m-1" } },
    {
      type: "approval.requested",
      data: { requestId: "r-1", toolName: `shell${HIDE}`, input: { cmd: `rm -rf ~${C1}` } },
    },
  ];
}

/** A control character a terminal would act on (C0 but tab and newline, DEL, C1). */
const acting = (text: string) =>
  [...text].some((c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && c !== "\t" && c !== "\n") || (code >= 0x7f && code <= 0x9f);
  });

describe("terminal control sequences in run data", () => {
  test("plain output (watch, events, get) shows them escaped and acts on none; --json stays exact", async () => {
    const { run, runner } = await edge.claimedRun({ runId: "esc-1", metadata: { note: `meta${OSC52}` } });
    await runner.emit(hostileSession(run.id));
    await edge.api.waitForStatus(run.id, "waiting");
    await runner.complete({ status: "succeeded", exitCode: 0 });

    const watched = startCli(edge.url, ["watch", run.id]);
    await expectExit(watched, 0);
    expect(watched.stdout()).toContain(`assistant: ${SHOWN}`);
    const events = await cli(edge.url, ["events", run.id]);
    const got = await cli(edge.url, ["get", run.id]);
    for (const out of [watched.stdout(), events.stdout, got.stdout]) {
      const line = out.split("\n").find(acting);
      expect(line, "a printed line with an active control character").toBeUndefined();
    }
    expect(got.stdout).toContain("meta\\\\x1b]52;c;cm0gLXJmIH4=\\\\x07");

    const json = startCli(edge.url, ["watch", run.id, "--json"]);
    await expectExit(json, 0);
    expect(ndjson<RunEvent>(json.stdout())).toEqual(await edge.api.events(run.id));
    expect(json.stdout()).not.toMatch(/[\u007f-\u009f]/); // C1 written as \u009b, still the same JSON value
  });

  test("on a real terminal: no OSC, C1 or BEL reaches it, and the hidden lines stay on screen", async () => {
    const { run, runner } = await edge.claimedRun({ runId: "esc-2" });
    const tty = startInPty(edge.url, ["watch", run.id], { columns: COLUMNS, rows: 40 });
    const view = () => screen(tty.output(), COLUMNS);
    await tty.waitForOutput("the status line", () => view().at(-1)?.includes("esc-2 · running") ?? false);
    await runner.emit(hostileSession(run.id));
    await tty.waitForOutput("the approval hint", () => (view().at(-1) ?? "").includes("awaiting approval"));
    await runner.complete({ status: "succeeded", exitCode: 0 });
    expect(await tty.waitExit()).toBe(0);

    const out = tty.output();
    expect(out).not.toContain(`${ESC}]`);
    expect([...out].filter((c) => c === "\u0007" || (c >= "\u0080" && c <= "\u009f"))).toEqual([]);
    const shown = view();
    expect(shown.some((l) => l.endsWith(`assistant: ${SHOWN}`))).toBe(true);
    expect(shown.some((l) => l.includes("approval r-1 requested"))).toBe(true);
  });
});
