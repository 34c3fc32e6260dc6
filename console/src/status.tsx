import type { RunStatus } from "../../src/protocol/index.ts";

/** How each status looks. A status this console does not know gets its own name and a neutral badge. */
type Tone = "neutral" | "info" | "active" | "warn" | "good" | "bad" | "muted";

const KNOWN: Partial<Record<string, { label: string; tone: Tone }>> = {
  queued: { label: "Queued", tone: "info" },
  running: { label: "Running", tone: "active" },
  waiting: { label: "Waiting for approval", tone: "warn" },
  stalled: { label: "Stalled", tone: "warn" },
  recovering: { label: "Recovering", tone: "warn" },
  succeeded: { label: "Succeeded", tone: "good" },
  failed: { label: "Failed", tone: "bad" },
  cancelled: { label: "Cancelled", tone: "muted" },
  timed_out: { label: "Timed out", tone: "bad" },
} satisfies Partial<Record<RunStatus, { label: string; tone: Tone }>>;

/** The statuses offered in the list's filter. */
export const FILTER_STATUSES: readonly string[] = Object.keys(KNOWN);

export function statusLabel(status: string): string {
  const known = KNOWN[status];
  if (known) return known.label;
  const words = status.replaceAll(/[_-]+/g, " ").trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : "Unknown";
}

export function statusTone(status: string): Tone {
  return KNOWN[status]?.tone ?? "neutral";
}

export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge tone-${statusTone(status)}`} data-status={status}>
      <span class="badge-dot" aria-hidden="true" />
      {statusLabel(status)}
    </span>
  );
}

const TERMINAL = new Set(["succeeded", "failed", "cancelled", "timed_out"]);
export const isTerminalStatus = (status: string) => TERMINAL.has(status);
