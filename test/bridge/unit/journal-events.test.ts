import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_LINE_CHARS } from "../../../runner-bridge/src/adapters/common.ts";
import { createAdapter } from "../../../runner-bridge/src/adapters/index.ts";
import { type JournalEvent, JournalEvents } from "../../../runner-bridge/src/journal-events.ts";
import { REDACTED } from "../../../runner-bridge/src/redact.ts";
import { formatSentinel } from "../../../runner-bridge/src/sentinel.ts";
import { tempDir } from "../harness/bridge.ts";

const NONCE = "nonce-1";

/** A journal of `lines`, ended by the supervisor's sentinel. */
function journal(lines: unknown[]): string {
  const file = path.join(tempDir("journal-events-"), "journal.ndjson");
  const text = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l)));
  fs.writeFileSync(file, `${[...text, formatSentinel(NONCE, { code: 0, signal: null })].join("\n")}\n`);
  return file;
}

function readAll(events: JournalEvents): JournalEvent[] {
  const out: JournalEvent[] = [];
  for (let batch = events.read(2); batch.length; batch = events.read(2)) out.push(...batch);
  return out;
}

const claudeTurns = [
  { type: "system", subtype: "init", session_id: "s" },
  { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "hi" }] } },
  { type: "result", subtype: "success", is_error: false, result: "hi" },
  { type: "control_request", request_id: "hook-1", request: { subtype: "hook_callback" } },
];

const codexSession = [
  { id: "rb-initialize", result: { userAgent: "codex" } },
  { id: "rb-thread-start", result: { thread: { id: "th_1" } } },
  { method: "turn/started", params: { turn: { id: "turn_1" } } },
  { method: "item/tool/call", id: 3, params: {} },
  { method: "turn/completed", params: { turn: { id: "turn_1", status: "completed" } } },
];

describe("reading the journal again from byte 0", () => {
  it.each([
    ["claude-code", claudeTurns],
    ["codex", codexSession],
    ["ndjson", ['{"type":"step","n":1}', "plain text", '{"type":"step","n":2}']],
  ])("reproduces the %s adapter's events and reactions exactly", (adapter, lines) => {
    const spec = { cwd: "/work", prompt: "go" };
    const events = new JournalEvents(journal(lines), NONCE, () => createAdapter(adapter, spec));
    const first = readAll(events);
    expect(first.map((e) => e.event.sourceSeq)).toEqual(lines.map((_, i) => i + 1));
    events.reread();
    expect(readAll(events)).toEqual(first);
  });

  it("reproduces a claude-code result's one close of stdin, not a second one", () => {
    const events = new JournalEvents(journal(claudeTurns), NONCE, () => createAdapter("claude-code", { cwd: "/" }));
    const closes = () =>
      readAll(events)
        .flatMap((e) => e.reactions.flat())
        .filter((envelope) => envelope.close)
        .map((envelope) => envelope.commandId);
    expect(closes()).toEqual(["claude:close:1"]);
    events.reread();
    expect(closes()).toEqual(["claude:close:1"]);
  });
});

describe("redaction", () => {
  const secret = "sk-live-0123456789abcdef0123456789abcdef";
  const eventsOf = (line: string) =>
    readAll(
      new JournalEvents(journal([line]), NONCE, () => createAdapter("ndjson", { cwd: "/" }), { redact: [secret] }),
    );

  it("redacts before a long line is cut, so no part of a secret across the cut leaves", () => {
    // The adapter keeps a text line's first MAX_LINE_CHARS; the secret starts 10 characters before.
    const line = `${"a".repeat(MAX_LINE_CHARS - 10)}${secret}${"b".repeat(1000)}`;
    const [only] = eventsOf(line);
    const sent = JSON.stringify(only?.event);
    expect(only?.event.data).toMatchObject({ metadata: { truncated: true } });
    expect(sent).not.toContain(secret.slice(0, 10));
    expect(sent).toContain(REDACTED);
  });

  it("a line that was not cut reads the same, its secret replaced", () => {
    const [only] = eventsOf(`before ${secret} after`);
    expect(only?.event).toMatchObject({ type: "TEXT_MESSAGE_CHUNK", data: { delta: `before ${REDACTED} after\n` } });
  });
});
