import { Component } from "preact";
import { useState } from "preact/hooks";
import { clockTime, prettyJson } from "../format.ts";
import { describe } from "./describe.ts";
import type { EventRow, MessageRow, ReasoningRow, Row, ToolRow } from "./model.ts";

/** One transcript row. Every row names the seqs it shows (`data-seqs`) and can show its raw JSON. */
export interface RowProps {
  row: Row;
  version: number;
  target: boolean;
  onCopyLink: (seq: number) => void;
}

const KIND_LABEL: Record<Row["kind"], string> = {
  message: "Message",
  reasoning: "Reasoning",
  tool: "Tool call",
  error: "Error",
  control: "Control",
  lifecycle: "Agent",
  raw: "Event",
};

function seqRange(row: Row): string {
  const first = row.firstSeq;
  const last = row.events[row.events.length - 1]?.seq ?? first;
  return first === last ? `#${first}` : `#${first}–${last}`;
}

function Meta(props: { row: Row; open: boolean; onToggle: () => void; onCopyLink: (seq: number) => void }) {
  const { row } = props;
  const time = row.events[0]?.time;
  return (
    <div class="row-meta">
      <span class="sr-only">{KIND_LABEL[row.kind]}</span>
      <span class="row-seq">{seqRange(row)}</span>
      {time && (
        <time dateTime={time} title={time}>
          {clockTime(time)}
        </time>
      )}
      <button
        type="button"
        class="link-button"
        aria-expanded={props.open}
        aria-label={`Raw JSON of event ${row.firstSeq}`}
        onClick={props.onToggle}
      >
        JSON
      </button>
      <button
        type="button"
        class="link-button"
        aria-label={`Copy link to event ${row.firstSeq}`}
        onClick={() => props.onCopyLink(row.firstSeq)}
      >
        Link
      </button>
    </div>
  );
}

function MessageBody({ row }: { row: MessageRow }) {
  return (
    <div class={`message role-${row.role.replaceAll(/[^a-z0-9_-]/gi, "")}`}>
      <div class="message-role">
        {row.role}
        {!row.complete && row.role !== "output" && <span class="streaming"> · streaming</span>}
      </div>
      <div class="message-text">{row.text || <em class="muted">(empty)</em>}</div>
    </div>
  );
}

function ReasoningBody({ row }: { row: ReasoningRow }) {
  return (
    <details class="reasoning" open={!row.complete}>
      <summary>Reasoning{row.complete ? "" : " · streaming"}</summary>
      <div class="message-text">{row.text || <em class="muted">(no text)</em>}</div>
    </details>
  );
}

function formatArgs(args: string): string {
  if (args.trim() === "") return "(none)";
  try {
    return prettyJson(JSON.parse(args));
  } catch {
    return args;
  }
}

function ToolBody({ row }: { row: ToolRow }) {
  const state = row.result !== null ? "done" : row.complete ? "called" : "running";
  return (
    <details class="tool">
      <summary>
        <span class="tool-name">{row.name}</span>
        <span class={`tool-state state-${state}`}>
          {state === "done" ? "result" : state === "called" ? "waiting for result" : "streaming arguments"}
        </span>
        <code class="tool-id">{row.toolCallId}</code>
      </summary>
      <div class="tool-body">
        <h4>Arguments</h4>
        <pre class="json">{formatArgs(row.args)}</pre>
        <h4>Result</h4>
        <pre class="json">{row.result === null ? "(none yet)" : formatArgs(row.result)}</pre>
      </div>
    </details>
  );
}

function EventBody({ row }: { row: EventRow }) {
  if (row.kind === "raw") {
    const data = row.event.data as { name?: unknown; value?: unknown } | null;
    const custom = row.event.type === "CUSTOM" && typeof data?.name === "string";
    return (
      <div class="raw-event">
        <code class="raw-type">{row.event.type}</code>
        {custom && <span class="raw-name">{String(data?.name)}</span>}
        <code class="raw-inline">{JSON.stringify(custom ? data?.value : row.event.data) ?? "null"}</code>
      </div>
    );
  }
  const summary = describe(row.event);
  return (
    <div class={`timeline tone-${summary.tone}`}>
      <span class="timeline-title">{summary.title}</span>
      {summary.detail && <span class="timeline-detail">{summary.detail}</span>}
      {row.kind === "error" && <code class="timeline-type">{row.event.type}</code>}
    </div>
  );
}

function RowBody({ row }: { row: Row }) {
  switch (row.kind) {
    case "message":
      return <MessageBody row={row} />;
    case "reasoning":
      return <ReasoningBody row={row} />;
    case "tool":
      return <ToolBody row={row} />;
    default:
      return <EventBody row={row} />;
  }
}

function RowViewInner({ row, target, onCopyLink }: RowProps) {
  const [open, setOpen] = useState(false);
  return (
    <li
      class={`row kind-${row.kind}${target ? " is-target" : ""}`}
      id={`seq-${row.firstSeq}`}
      data-key={row.key}
      data-kind={row.kind}
      data-seqs={row.events.map((event) => event.seq).join(",")}
      tabIndex={target ? -1 : undefined}
    >
      <div class="row-main">
        <div class="row-body">
          <RowBody row={row} />
        </div>
        <Meta row={row} open={open} onToggle={() => setOpen(!open)} onCopyLink={onCopyLink} />
      </div>
      {open && <pre class="json raw-json">{row.events.map((event) => JSON.stringify(event)).join("\n")}</pre>}
    </li>
  );
}

/** Re-renders only when its row changed (rows are updated in place, so `version` says when). */
export class RowView extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const now = this.props;
    return next.row !== now.row || next.version !== now.version || next.target !== now.target;
  }

  override render() {
    return <RowViewInner {...this.props} />;
  }
}
