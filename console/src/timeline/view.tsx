import { useMemo, useRef, useState } from "preact/hooks";
import type { RunEvent } from "../../../src/protocol/index.ts";
import { clockTime } from "../format.ts";
import { buildWaterfall, type Span, type SpanKind, spanDuration } from "./model.ts";

/**
 * The waterfall beside the conversation: a row per span, its bar placed by time. Windowed like
 * the transcript (only the rows in view are in the DOM), so a run of 50,000 events draws what
 * fits on screen. A bar (or its label) opens its first event's row in the conversation.
 */
const ROW_PX = 26;
const OVERSCAN = 12;

const KIND_LABEL: Record<SpanKind, string> = {
  runner: "Runner",
  gap: "No runner",
  turn: "Turn",
  tool: "Tool call",
  approval: "Approval",
};

export interface TimelineProps {
  events: readonly RunEvent[];
  version: number;
  now: number;
  ended: boolean;
  hasEarlier: boolean;
  /** Loads every earlier page, so the timeline covers the whole run. */
  loadAll: () => Promise<void>;
  /** Shows the row of this event in the conversation. */
  onPick: (seq: number) => void;
}

function Bar({
  span,
  from,
  total,
  end,
  onPick,
}: {
  span: Span;
  from: number;
  total: number;
  end: number;
  onPick: (seq: number) => void;
}) {
  const stop = span.end ?? end;
  const left = ((span.start - from) / total) * 100;
  const width = Math.max(((stop - span.start) / total) * 100, 0.3);
  const took = spanDuration(stop - span.start);
  const describe = `${KIND_LABEL[span.kind]} ${span.label}: ${clockTime(new Date(span.start).toISOString())}, ${
    span.end === null ? `open for ${took}` : took
  }${span.outcome ? `, ${span.outcome}` : ""}`;
  return (
    <li class={`span span-${span.kind}`} data-kind={span.kind} data-seq={span.seq} style={{ height: `${ROW_PX}px` }}>
      <button type="button" class="span-label" onClick={() => onPick(span.seq)} title={describe}>
        <span class="span-kind">{KIND_LABEL[span.kind]}</span> {span.label}
      </button>
      <div class="span-track">
        <button
          type="button"
          class={`span-bar${span.end === null ? " is-open" : ""}`}
          style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }}
          aria-label={`${describe}; show event ${span.seq}`}
          onClick={() => onPick(span.seq)}
        />
        <span class="span-time">
          {took}
          {span.outcome ? ` · ${span.outcome}` : ""}
        </span>
      </div>
    </li>
  );
}

export function Timeline(props: TimelineProps) {
  const { events, now, ended } = props;
  const [kinds, setKinds] = useState<ReadonlySet<SpanKind>>(new Set(["runner", "gap", "turn", "tool", "approval"]));
  const [scrollTop, setScrollTop] = useState(0);
  const [loading, setLoading] = useState(false);
  const scroller = useRef<HTMLDivElement>(null);
  // Rebuilt as events arrive; `now` only moves open bars, so a live run redraws every few seconds.
  const waterfall = useMemo(() => buildWaterfall(events, now, ended), [events, props.version, ended, now]);
  const spans = useMemo(() => waterfall.spans.filter((span) => kinds.has(span.kind)), [waterfall, kinds]);
  const total = waterfall.end - waterfall.start;
  const height = scroller.current?.clientHeight ?? 480;
  const first = Math.max(0, Math.floor(scrollTop / ROW_PX) - OVERSCAN);
  const last = Math.min(spans.length, Math.ceil((scrollTop + height) / ROW_PX) + OVERSCAN);
  const toggle = (kind: SpanKind) => {
    const next = new Set(kinds);
    if (next.has(kind)) next.delete(kind);
    else next.add(kind);
    setKinds(next);
  };
  const counts = new Map<SpanKind, number>();
  for (const span of waterfall.spans) counts.set(span.kind, (counts.get(span.kind) ?? 0) + 1);
  const startIso = new Date(waterfall.start).toISOString();
  return (
    <section class="timeline-view" aria-label="Timeline">
      <div class="transcript-tools">
        <fieldset class="filters">
          <legend class="sr-only">Show kinds of spans</legend>
          {(Object.keys(KIND_LABEL) as SpanKind[]).map((kind) => (
            <button
              key={kind}
              type="button"
              class="chip"
              data-kind={kind}
              aria-pressed={kinds.has(kind)}
              onClick={() => toggle(kind)}
            >
              {KIND_LABEL[kind]} <span class="chip-count">{counts.get(kind) ?? 0}</span>
            </button>
          ))}
        </fieldset>
        <span class="muted shown-count">
          {clockTime(startIso)} → {spanDuration(total)}
          {props.hasEarlier ? " · from the earliest event loaded" : ""}
        </span>
        {props.hasEarlier && (
          <button
            type="button"
            class="quiet-button"
            disabled={loading}
            onClick={() => {
              setLoading(true);
              void props.loadAll().finally(() => setLoading(false));
            }}
          >
            {loading ? "Loading…" : "Load the whole run"}
          </button>
        )}
      </div>
      <div class="timeline-axis" aria-hidden="true">
        <span />
        <div class="axis-ticks">
          {[0, 0.25, 0.5, 0.75, 1].map((f) => (
            <span key={f} style={{ left: `${f * 100}%` }}>
              {f === 0 ? "0" : `+${spanDuration(total * f)}`}
            </span>
          ))}
        </div>
      </div>
      <div
        class="timeline-scroll"
        ref={scroller}
        onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}
        data-spans={spans.length}
      >
        {spans.length === 0 ? (
          <p class="empty muted">Nothing to draw yet.</p>
        ) : (
          <ol class="spans" style={{ height: `${spans.length * ROW_PX}px`, paddingTop: `${first * ROW_PX}px` }}>
            {spans.slice(first, last).map((span) => (
              <Bar
                key={`${span.kind}:${span.seq}`}
                span={span}
                from={waterfall.start}
                total={total}
                end={waterfall.end}
                onPick={props.onPick}
              />
            ))}
          </ol>
        )}
      </div>
    </section>
  );
}
