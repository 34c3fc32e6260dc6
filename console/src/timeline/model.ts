import {
  AgentEventType,
  AguiEventFamily,
  AguiEventType,
  ControlEventType,
  type RunEvent,
} from "../../../src/protocol/index.ts";
import { fields } from "../fields.ts";

/**
 * The run as a waterfall: one span per turn, tool call and approval, from its first event's time
 * to the event that ends it, and the runner's attachment as spans with the gaps between them
 * (stalled, recovering, before the first claim) as spans of their own. Built in one pass over
 * the events, so 50,000 events are a few milliseconds.
 */
export type SpanKind = "runner" | "gap" | "turn" | "tool" | "approval";

export interface Span {
  kind: SpanKind;
  label: string;
  start: number;
  /** null while it is still open (drawn to the end of the view). */
  end: number | null;
  /** The event that opened it: the row it links to. */
  seq: number;
  /** How it ended, when that is not plain (denied, expired, interrupted, stalled …). */
  outcome?: string;
}

export interface Waterfall {
  spans: Span[];
  start: number;
  end: number;
}

// The agent's own time where it has one: events journaled while no bridge was attached arrive
// together after a takeover, but happened minutes apart.
const at = (event: RunEvent) => Date.parse(event.agentTime ?? event.time);
const str = (value: unknown) => (typeof value === "string" ? value : undefined);

export function buildWaterfall(events: readonly RunEvent[], now: number, ended: boolean): Waterfall {
  const spans: Span[] = [];
  const tools = new Map<string, Span>();
  const approvals = new Map<string, Span>();
  let turn: Span | null = null;
  let turns = 0;
  let runner: Span | null = null;
  let gap: Span | null = null;
  let earliest = Number.POSITIVE_INFINITY;
  let latest = Number.NEGATIVE_INFINITY;
  const open = (span: Span) => {
    spans.push(span);
    return span;
  };
  const closeRunner = (t: number, outcome: string | undefined, gapLabel: string | null, seq: number) => {
    if (runner) {
      runner.end = t;
      if (outcome) runner.outcome = outcome;
      runner = null;
    }
    if (gapLabel && !gap) gap = open({ kind: "gap", label: gapLabel, start: t, end: null, seq });
  };
  for (const event of events) {
    const t = at(event);
    earliest = Math.min(earliest, t);
    latest = Math.max(latest, t);
    const data = fields(event.data);
    switch (event.type) {
      case ControlEventType.RUN_CREATED:
        gap = open({ kind: "gap", label: "no runner yet", start: t, end: null, seq: event.seq });
        break;
      case ControlEventType.RUN_CLAIMED:
      case ControlEventType.RUN_RESUMED: {
        if (gap) gap.end = t;
        gap = null;
        if (runner && event.type === ControlEventType.RUN_CLAIMED) closeRunner(t, "taken over", null, event.seq);
        if (!runner) {
          const name = str(data.runnerId) ?? "runner";
          const epoch = data.epoch === undefined ? "" : ` · epoch ${String(data.epoch)}`;
          runner = open({ kind: "runner", label: `${name}${epoch}`, start: t, end: null, seq: event.seq });
        }
        break;
      }
      case ControlEventType.RUN_STALLED:
        closeRunner(t, "stalled", "no runner · stalled", event.seq);
        break;
      case ControlEventType.RUN_RECOVERING:
        closeRunner(t, "lost", "no runner · recovering", event.seq);
        break;
      case ControlEventType.RUN_FINISHED:
        closeRunner(t, undefined, null, event.seq);
        if (gap) gap.end = t;
        gap = null;
        break;
      case AguiEventType.RUN_STARTED:
        if (turn) turn.end = t;
        turns += 1;
        turn = open({ kind: "turn", label: `#${turns}`, start: t, end: null, seq: event.seq });
        break;
      case AguiEventType.RUN_FINISHED:
      case AguiEventType.RUN_ERROR:
        if (turn) {
          turn.end = t;
          if (event.type === AguiEventType.RUN_ERROR) turn.outcome = "error";
          turn = null;
        }
        break;
      case AgentEventType.APPROVAL_REQUESTED: {
        const id = str(data.requestId) ?? String(event.seq);
        approvals.set(id, open({ kind: "approval", label: `approval ${id}`, start: t, end: null, seq: event.seq }));
        break;
      }
      case ControlEventType.APPROVAL_RESOLVED:
      case ControlEventType.APPROVAL_EXPIRED: {
        const span = approvals.get(str(data.requestId) ?? "");
        if (span && span.end === null) {
          span.end = t;
          span.outcome =
            event.type === ControlEventType.APPROVAL_EXPIRED
              ? "expired"
              : data.decision === "approve"
                ? "approved"
                : "denied";
        }
        break;
      }
      default:
        if (event.type.startsWith(AguiEventFamily.TOOL_CALL)) {
          const id = str(data.toolCallId);
          if (!id) break;
          let span = tools.get(id);
          if (!span) {
            const name = str(data.toolCallName) ?? str(data.name) ?? "tool";
            span = open({ kind: "tool", label: name, start: t, end: null, seq: event.seq });
            tools.set(id, span);
          }
          if (event.type === AguiEventType.TOOL_CALL_RESULT) span.end = t;
        }
    }
  }
  const any = events.length > 0;
  const start = any ? earliest : now;
  const end = ended && any ? latest : Math.max(now, any ? latest : now);
  // An ended run leaves nothing open: whatever was still open stopped with it.
  if (ended) {
    for (const span of spans) {
      if (span.end === null) {
        span.end = end;
        if (span.kind !== "gap" && span.kind !== "runner") span.outcome ??= "unfinished";
      }
    }
  }
  // Agent times and arrival times mix (lifecycle events have only the edge's): no bar runs backwards.
  for (const span of spans) if (span.end !== null && span.end < span.start) span.end = span.start;
  return { spans, start, end: Math.max(end, start + 1) };
}

/** Milliseconds as the bars' labels say them: 850 ms, 12.3 s, 4 min 05 s, 2 h 10 min. */
export function spanDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}
