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

/** The rows a stored log should render as: one per message/tool call/reasoning id, one per other event. */
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
      if (event.type.endsWith("_CONTENT") || event.type === "TOOL_CALL_ARGS") row.text += data.delta;
      plain = null;
      continue;
    }
    if (event.type === "TEXT_MESSAGE_CONTENT") {
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
          : event.source === "control" || event.type === "approval.requested"
            ? "control"
            : "raw";
    rows.push({ seqs: [event.seq], kind, text: "" });
  }
  return rows;
}

/** The rows in the page's DOM, with the text a reader sees for messages and tool arguments. */
export async function renderedRows(page: Page): Promise<TranscriptRow[]> {
  return page.locator("li.row").evaluateAll((items) =>
    items.map((item) => {
      const kind = item.getAttribute("data-kind") ?? "";
      const args = item.querySelector(".tool-body pre")?.textContent ?? "";
      const text =
        kind === "tool"
          ? JSON.stringify(args === "(none)" ? "" : JSON.parse(args))
          : kind === "message" || kind === "reasoning"
            ? (item.querySelector(".message-text")?.textContent ?? "")
            : "";
      return { seqs: (item.getAttribute("data-seqs") ?? "").split(",").map(Number), kind, text };
    }),
  );
}

/** Tool rows show pretty-printed arguments; compare them as JSON. */
export function comparable(rows: TranscriptRow[]): TranscriptRow[] {
  return rows.map((row) =>
    row.kind === "tool" && row.text.startsWith("{") ? { ...row, text: JSON.stringify(JSON.parse(row.text)) } : row,
  );
}

/** Every seq the page shows, sorted (rows group events, so row order is not seq order). */
export async function renderedSeqs(page: Page): Promise<number[]> {
  return (await renderedRows(page)).flatMap((row) => row.seqs).sort((a, b) => a - b);
}

/** True when the page renders exactly the rows the stored log gives, in order. */
export async function showsLog(page: Page, stored: readonly RunEvent[]): Promise<boolean> {
  return JSON.stringify(comparable(await renderedRows(page))) === JSON.stringify(comparable(expectedRows(stored)));
}
