import { AguiEventType } from "../../../src/protocol/index.ts";
import { describe } from "./describe.ts";
import { JumpLink } from "./jump.tsx";
import type { EventRow } from "./model.ts";
import { inline, nativeLabel, nativeOf } from "./native.ts";

/** Rows of one event: timeline rows (control, lifecycle, session, errors) and raw JSON. */

function RawBody({ row }: { row: EventRow }) {
  const data = (row.event.data ?? null) as { name?: unknown; value?: unknown; source?: unknown } | null;
  if (row.event.type === AguiEventType.CUSTOM && typeof data?.name === "string") {
    return (
      <div class="raw-event">
        <code class="raw-type">CUSTOM</code>
        <span class="raw-name">{data.name}</span>
        <code class="raw-inline">{inline(data.value ?? null)}</code>
      </div>
    );
  }
  // RAW: what the agent printed, named (a method, a message type) and shown as it came.
  const isRaw = row.event.type === AguiEventType.RAW;
  const native = isRaw ? nativeOf(row.event) : undefined;
  const label = isRaw ? nativeLabel(native) : "";
  return (
    <div class="raw-event">
      <code class="raw-type">{row.event.type}</code>
      {isRaw && typeof data?.source === "string" && <span class="raw-source">{data.source}</span>}
      {label && <span class="raw-name">{label}</span>}
      <code class="raw-inline">{inline(isRaw && native !== undefined ? native : row.event.data)}</code>
    </div>
  );
}

export function EventBody({ row }: { row: EventRow }) {
  if (row.kind === "raw") return <RawBody row={row} />;
  const summary = describe(row.event, { replaced: row.replaced });
  return (
    <div class={`timeline tone-${summary.tone}`}>
      <span class="timeline-title">{summary.title}</span>
      {summary.detail && (
        <span class={row.kind === "session" ? "timeline-detail session-id" : "timeline-detail"}>{summary.detail}</span>
      )}
      {row.tool && (
        <span class="timeline-detail">
          for{" "}
          <JumpLink seq={row.tool.seq} label={`Tool call ${row.tool.name ?? "tool"}, event ${row.tool.seq}`}>
            {row.tool.name ?? "tool"}
          </JumpLink>
        </span>
      )}
      {row.kind === "error" && <code class="timeline-type">{row.event.type}</code>}
    </div>
  );
}
