import type { Page } from "playwright-core";
import type { RunEvent } from "../../src/protocol/index.ts";
import type { AgentEvent } from "../support/runner-client.ts";

/**
 * What the tests feed a run and how they read the page back: the rendered transcript as rows
 * (the seqs each row shows, its kind, its text), and the rows the stored log should give.
 */
export interface TranscriptRow {
  seqs: number[];
  kind: string;
  text: string;
  label?: string;
  result?: string;
  approval?: string;
}

/** An agent turn in AG-UI events: messages, an interleaved tool call, reasoning, plain output, oddities. */
export function conversation(turn: number): AgentEvent[][] {
  const m = `m${turn}`;
  const c = `call-${turn}`;
  return [
    [
      { type: "RUN_STARTED", data: { threadId: "thread-1", runId: `turn-${turn}` } },
      { type: "STEP_STARTED", data: { stepName: `plan-${turn}` } },
      { type: "TEXT_MESSAGE_START", data: { messageId: m, role: "assistant" } },
      { type: "TEXT_MESSAGE_CONTENT", data: { messageId: m, delta: "Looking at the failing " } },
      { type: "TOOL_CALL_START", data: { toolCallId: c, toolCallName: "shell", parentMessageId: m } },
      { type: "TEXT_MESSAGE_CONTENT", data: { messageId: m, delta: "tests first; " } },
      { type: "TOOL_CALL_ARGS", data: { toolCallId: c, delta: '{"command":"npm test",' } },
      { type: "TOOL_CALL_ARGS", data: { toolCallId: c, delta: '"cwd":"/work"}' } },
      { type: "TEXT_MESSAGE_CONTENT", data: { messageId: m, delta: "then I will fix them." } },
      { type: "TEXT_MESSAGE_END", data: { messageId: m } },
      { type: "TOOL_CALL_END", data: { toolCallId: c } },
      { type: "TOOL_CALL_RESULT", data: { toolCallId: c, messageId: `${c}-result`, content: "2 failing, 40 passing" } },
    ],
    [
      { type: "REASONING_START", data: { messageId: `r${turn}` } },
      { type: "REASONING_MESSAGE_CONTENT", data: { messageId: `r${turn}`, delta: "The snapshot is stale; " } },
      { type: "REASONING_MESSAGE_CONTENT", data: { messageId: `r${turn}`, delta: "regenerate it." } },
      { type: "REASONING_END", data: { messageId: `r${turn}` } },
      { type: "TEXT_MESSAGE_CONTENT", data: { delta: "> vitest run --update\n" } },
      { type: "TEXT_MESSAGE_CONTENT", data: { delta: "  ✓ 42 passed" } },
      { type: "CUSTOM", data: { name: "progress", value: { done: 42, total: 42 } } },
      { type: "RAW", data: { event: { kind: "codex/tokenCount", tokens: 1834 } } },
      { type: "SOMETHING_NEW", data: { shape: ["unknown", 1] } },
      { type: "RUN_ERROR", data: { message: "rate limited; retrying in 2 s", code: "rate_limit" } },
    ],
    [
      { type: "TEXT_MESSAGE_START", data: { messageId: `${m}b`, role: "assistant" } },
      { type: "TEXT_MESSAGE_CONTENT", data: { messageId: `${m}b`, delta: "All 42 tests pass now." } },
      { type: "TEXT_MESSAGE_END", data: { messageId: `${m}b` } },
      { type: "STEP_FINISHED", data: { stepName: `plan-${turn}` } },
      { type: "RUN_FINISHED", data: { threadId: "thread-1", runId: `turn-${turn}` } },
    ],
  ];
}

const LIFECYCLE = new Set(["RUN_STARTED", "RUN_FINISHED", "STEP_STARTED", "STEP_FINISHED"]);
/** Events whose delta is text of their message, reasoning or tool arguments. */
const DELTAS = new Set([
  "TEXT_MESSAGE_CONTENT",
  "TEXT_MESSAGE_CHUNK",
  "REASONING_MESSAGE_CONTENT",
  "REASONING_MESSAGE_CHUNK",
  "TOOL_CALL_ARGS",
  "TOOL_CALL_CHUNK",
]);

/**
 * The rows a stored log should render as: one per messageId (text, or reasoning), one per
 * toolCallId, one per run of id-less text deltas, one per other event; each row's text is its
 * deltas joined (a tool's: its arguments).
 */
export function expectedRows(events: readonly RunEvent[]): TranscriptRow[] {
  const rows: TranscriptRow[] = [];
  const grouped = new Map<string, TranscriptRow>();
  let plain: TranscriptRow | null = null;
  for (const event of events) {
    const data = (event.data ?? {}) as Record<string, string>;
    const group = event.type.startsWith("TEXT_MESSAGE_")
      ? data.messageId && `message:${data.messageId}`
      : event.type.startsWith("TOOL_CALL_")
        ? `tool:${data.toolCallId}`
        : event.type.startsWith("REASONING_")
          ? `reasoning:${data.messageId}`
          : undefined;
    if (group) {
      let row = grouped.get(group);
      if (!row) {
        row = { seqs: [], kind: group.split(":")[0] as string, text: "" };
        grouped.set(group, row);
        rows.push(row);
      }
      row.seqs.push(event.seq);
      if (DELTAS.has(event.type)) row.text += data.delta;
      plain = null;
      continue;
    }
    if (event.type === "TEXT_MESSAGE_CONTENT" || event.type === "TEXT_MESSAGE_CHUNK") {
      if (!plain) {
        plain = { seqs: [], kind: "message", text: "" };
        rows.push(plain);
      }
      plain.seqs.push(event.seq);
      plain.text += data.delta;
      continue;
    }
    plain = null;
    const kind =
      event.type === "RUN_ERROR"
        ? "error"
        : LIFECYCLE.has(event.type)
          ? "lifecycle"
          : event.type === "agent.session"
            ? "session"
            : event.source === "control" || event.type === "approval.requested"
              ? "control"
              : "raw";
    rows.push({ seqs: [event.seq], kind, text: "" });
  }
  return rows;
}

/**
 * The rows in the page's DOM as a reader sees them: the seqs each shows, its kind, its text (a
 * message's, reasoning's, or a tool call's arguments as compact JSON), and what else it says —
 * `label` (a message's role line, a tool's name, headline and state, a timeline row's line, a raw row's
 * type, source and name), a tool's result line and the approval it links to.
 */
export async function renderedRows(page: Page): Promise<TranscriptRow[]> {
  return page.locator("li.row").evaluateAll((items) =>
    items.map((item) => {
      const read = (selector: string) => item.querySelector(selector)?.textContent?.trim() ?? "";
      type Node = { textContent: string | null };
      const textOf = (node: Node) => node.textContent?.trim() ?? "";
      const readAll = (selector: string) =>
        Array.from(item.querySelectorAll(selector) as Iterable<Node>, textOf).filter(Boolean);
      const kind = item.getAttribute("data-kind") ?? "";
      const args = item.querySelector(".tool-body pre")?.textContent ?? "";
      const compactJson = (shown: string) => {
        try {
          return JSON.stringify(JSON.parse(shown));
        } catch {
          return shown; // arguments still streaming
        }
      };
      const text =
        kind === "tool"
          ? args === "(none)"
            ? ""
            : compactJson(args)
          : kind === "message" || kind === "reasoning"
            ? (item.querySelector(".message-text")?.textContent ?? "")
            : "";
      const label =
        kind === "message"
          ? read(".message-role")
          : kind === "reasoning"
            ? read(".reasoning-label")
            : kind === "tool"
              ? `${readAll(".tool-name, .tool-headline").join(" ")} · ${read(".tool-state")}`
              : kind === "raw"
                ? readAll(".raw-type, .raw-source, .raw-name").join(" ")
                : Array.from((item.querySelector(".timeline")?.children ?? []) as Iterable<Node>, textOf)
                    .filter(Boolean)
                    .join(" ");
      const row: TranscriptRow = {
        seqs: (item.getAttribute("data-seqs") ?? "").split(",").map(Number),
        kind,
        text,
        label,
      };
      if (item.querySelector(".tool-preview")) row.result = read(".tool-preview");
      if (item.querySelector(".tool-approval")) row.approval = read(".tool-approval").replaceAll(/\s+/g, " ");
      return row;
    }),
  );
}

function compactJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/** The parts a generic expectation covers: seqs, kind and text (tool arguments compared as JSON). */
export function comparable(rows: TranscriptRow[]): TranscriptRow[] {
  return rows.map(({ seqs, kind, text }) => ({ seqs, kind, text: kind === "tool" ? compactJson(text) : text }));
}

/** What a reader sees of each row, without seqs: for literal expectations of a whole session. */
export async function readRows(page: Page): Promise<Omit<TranscriptRow, "seqs">[]> {
  return (await renderedRows(page)).map(({ seqs: _seqs, ...rest }) => rest);
}

/** Every seq the page shows, sorted (rows group events, so row order is not seq order). */
export async function renderedSeqs(page: Page): Promise<number[]> {
  return (await renderedRows(page)).flatMap((row) => row.seqs).sort((a, b) => a - b);
}

/** True when the page renders exactly the rows the stored log gives, in order. */
export async function showsLog(page: Page, stored: readonly RunEvent[]): Promise<boolean> {
  return JSON.stringify(comparable(await renderedRows(page))) === JSON.stringify(comparable(expectedRows(stored)));
}
