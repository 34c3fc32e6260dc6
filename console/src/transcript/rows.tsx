import { Component } from "preact";
import { AguiEventType } from "../../../src/protocol/index.ts";
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

/** An arrival this much later than the agent's own time is shown beside it (a runner was away). */
const LATE_ARRIVAL_MS = 1000;

/** The agent's time of the row when its runner said it, else when the edge stored it. */
function RowTime({ row }: { row: Row }) {
  const first = row.events[0];
  if (!first?.time) return null;
  const written = first.agentTime;
  if (!written) {
    return (
      <time dateTime={first.time} title={first.time}>
        {clockTime(first.time)}
      </time>
    );
  }
  const late = Date.parse(first.time) - Date.parse(written) >= LATE_ARRIVAL_MS;
  return (
    <>
      <time dateTime={written} title={`written by the agent ${written}; stored ${first.time}`}>
        {clockTime(written)}
      </time>
      {late && (
        <time class="row-arrival" dateTime={first.time} title={`stored ${first.time}, after the runner came back`}>
          arrived {clockTime(first.time)}
        </time>
      )}
    </>
  );
}

function Meta(props: { row: Row; open: boolean; onToggle: () => void; onCopyLink: (seq: number) => void }) {
  const { row } = props;
  return (
    <div class="row-meta">
      <span class="sr-only">{KIND_LABEL[row.kind]}</span>
      <span class="row-seq">{seqRange(row)}</span>
      <RowTime row={row} />
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
  return (
    row.kind === "lifecycle" &&
    (row.event.type === AguiEventType.RUN_STARTED || row.event.type === AguiEventType.RUN_FINISHED)
  );
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
