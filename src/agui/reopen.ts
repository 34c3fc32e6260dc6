import { AguiEventType as T, type EventsPage, type Result, type RunEvent } from "../protocol/index.ts";
import { aguiEvent, sseFrame } from "./events.ts";

/**
 * Resuming inside an open message. AG-UI's verifier (what HttpAgent runs on every response) refuses
 * a TEXT_MESSAGE_CONTENT, TOOL_CALL_ARGS, ..._END or STEP_FINISHED whose START it has not seen in
 * that response, so a response resumed mid-message would be refused. Before the first such event
 * the stream sends the stored START of what it continues again, without an `id:` line (the
 * client's Last-Event-ID stays the seq it has). HttpAgent applies a START for a message or tool
 * call it already holds to that same message, so each one is in its messages once.
 */

type Role = "start" | "continue" | "end";
type Span = { kind: string; field: string; role: Role };

/** Each kind of span: the field naming one, the event opening it, those continuing it, the one closing it. */
const SPAN_KINDS = [
  ["text", "messageId", T.TEXT_MESSAGE_START, [T.TEXT_MESSAGE_CONTENT], T.TEXT_MESSAGE_END],
  ["tool", "toolCallId", T.TOOL_CALL_START, [T.TOOL_CALL_ARGS], T.TOOL_CALL_END],
  ["reasoning-message", "messageId", T.REASONING_MESSAGE_START, [T.REASONING_MESSAGE_CONTENT], T.REASONING_MESSAGE_END],
  ["reasoning", "messageId", T.REASONING_START, [], T.REASONING_END],
  ["step", "stepName", T.STEP_STARTED, [], T.STEP_FINISHED],
] as const;

const SPANS: ReadonlyMap<string, Span> = new Map(
  SPAN_KINDS.flatMap(
    ([kind, field, start, continues, end]): Array<[string, Span]> => [
      [start, { kind, field, role: "start" }],
      ...continues.map((type): [string, Span] => [type, { kind, field, role: "continue" }]),
      [end, { kind, field, role: "end" }],
    ],
  ),
);

/**
 * How far back from the resume point a START is looked for: a message streamed in more pieces than
 * this before the client left is resumed without its START, as before (docs/AGUI.md).
 */
export const REOPEN_LOOKBACK = 5_000;

function spanOf(event: RunEvent): { key: string; role: Role } | null {
  const span = SPANS.get(event.type);
  if (!span || typeof event.data !== "object" || event.data === null) return null;
  const id = (event.data as Record<string, unknown>)[span.field];
  return typeof id === "string" ? { key: `${span.kind}:${id}`, role: span.role } : null;
}

/** Encodes a response's log events, reopening what a resumed response continues. */
export class ResumeEncoder {
  /** Spans this response has started (their START sent, stored or again). */
  private readonly started = new Set<string>();
  /** The STARTs of spans open at the resume point, read once, at the first event that needs one. */
  private openAtResume: Map<string, RunEvent> | null = null;
  private readonly encoder = new TextEncoder();
  private readonly runId: string;
  private readonly after: number;
  private readonly page: (after: number) => Promise<Result<EventsPage>>;

  constructor(runId: string, after: number, page: (after: number) => Promise<Result<EventsPage>>) {
    this.runId = runId;
    this.after = after;
    this.page = page;
  }

  async encode(events: readonly RunEvent[]): Promise<Uint8Array> {
    let text = "";
    for (const event of events) {
      const span = spanOf(event);
      if (span?.role === "start") this.started.add(span.key);
      else if (span && !this.started.has(span.key) && this.after > 0) {
        const start = (await this.opened()).get(span.key);
        if (start) text += sseFrame(aguiEvent(start, this.runId), null);
        // Reopened at most once; a span that was not open is passed as stored.
        this.started.add(span.key);
      }
      text += sseFrame(aguiEvent(event, this.runId), event.seq);
    }
    return this.encoder.encode(text);
  }

  /** The spans open at `after`, by their START in the REOPEN_LOOKBACK events up to it. */
  private async opened(): Promise<Map<string, RunEvent>> {
    if (this.openAtResume) return this.openAtResume;
    const open = new Map<string, RunEvent>();
    let cursor = Math.max(0, this.after - REOPEN_LOOKBACK);
    while (cursor < this.after) {
      const page = await this.page(cursor);
      if (!page.ok || page.value.events.length === 0) break;
      for (const event of page.value.events) {
        if (event.seq > this.after) break;
        const span = spanOf(event);
        if (span?.role === "start") open.set(span.key, event);
        else if (span?.role === "end") open.delete(span.key);
      }
      const last = page.value.events.at(-1)?.seq ?? this.after;
      if (last <= cursor) break;
      cursor = last;
    }
    this.openAtResume = open;
    return open;
  }
}
