import { Component } from "preact";
import { useState } from "preact/hooks";
import { clockTime } from "../format.ts";
import { MessageBody, ReasoningBody, ToolBody } from "./bodies.tsx";
import { EventBody } from "./event-body.tsx";
import type { Row } from "./model.ts";

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
  session: "Session",
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

/** RUN_STARTED and RUN_FINISHED frame a turn: they are drawn as its edges. */
function turnEdge(row: Row): boolean {
  return row.kind === "lifecycle" && (row.event.type === "RUN_STARTED" || row.event.type === "RUN_FINISHED");
}

function RowViewInner({ row, target, onCopyLink }: RowProps) {
  const [open, setOpen] = useState(false);
  return (
    <li
      class={`row kind-${row.kind}${turnEdge(row) ? " turn-edge" : ""}${target ? " is-target" : ""}`}
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
