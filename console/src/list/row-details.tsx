import type { RunRecord } from "../../../src/protocol/index.ts";
import type { RunListing } from "../api.ts";
import { duration } from "../format.ts";
import { statusLabel } from "../status.tsx";
import { costText } from "../usage.ts";
import { agentName } from "./details.ts";

/** The columns read from each run's record (list/details.ts), between Status and Created. */
export const DETAIL_HEADINGS = ["Agent", "Duration", "Outcome", "Events", "Cost"] as const;

function outcomeText(record: RunRecord): string {
  const outcome = record.outcome;
  if (!outcome) return "—";
  if (outcome.error) return `${statusLabel(outcome.status)} · ${outcome.error.code}`;
  if (outcome.exitCode !== undefined) return `${statusLabel(outcome.status)} · exit ${outcome.exitCode}`;
  return statusLabel(outcome.status);
}

export function DetailCells(props: { run: RunListing; record: RunRecord | undefined; now: number }) {
  const { record } = props;
  const pending = <span class="muted">…</span>;
  return (
    <>
      <td class="agent-cell">{record ? (agentName(record) ?? <span class="muted">—</span>) : pending}</td>
      <td class="duration-cell">
        {record ? duration(record.createdAt, record.finishedAt ?? new Date(props.now).toISOString()) : pending}
      </td>
      <td class="outcome-cell" title={record?.outcome?.error?.message}>
        {record ? outcomeText(record) : pending}
      </td>
      <td class="events-cell">{record ? record.lastSeq : pending}</td>
      <td class="cost-cell">{costText(props.run.usage?.costUsd)}</td>
    </>
  );
}
