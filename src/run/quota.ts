import { utf8Length } from "../log/log.ts";
import type { RunEvent } from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";
import { eventJson } from "./store.ts";

/** What the log quota reads and does: the log size, the limit, ending the run. */
export type QuotaHost = Pick<RunMachine, "effects" | "limits" | "log" | "terminalize">;

/**
 * The per-run byte quota (RUN_LOG_MAX_BYTES): runner events that would take the log past it are
 * not stored, and the run fails `quota_exceeded` at once rather than leave a runner resending a
 * batch that can never land. Control events the object writes (its own bounded reports) are not
 * refused, so the run can always record how it ended.
 */
export function overQuota(machine: QuotaHost, events: readonly RunEvent[]): boolean {
  const stored = machine.log.logBytes();
  // A UTF-16 unit is at most 3 bytes of UTF-8: a batch that fits at that bound fits, and its texts
  // need no scan for non-ASCII (that scan was a twelfth of a runner frame's time).
  let units = 0;
  for (const event of events) units += eventJson(event).length;
  if (stored + units * 3 <= machine.limits.logBytes) return false;
  let bytes = stored;
  for (const event of events) bytes += utf8Length(eventJson(event));
  return bytes > machine.limits.logBytes;
}

/** Ends the run `failed` (quota_exceeded), telling its runner why before it is dropped. */
export function exceedQuota(machine: QuotaHost): void {
  const message = `the run's log reached its quota of ${machine.limits.logBytes} bytes (RUN_LOG_MAX_BYTES); nothing more is stored`;
  machine.effects.runnerFrames.push({ type: "error", code: "quota_exceeded", message });
  machine.terminalize({ status: "failed", error: { code: "quota_exceeded", message } }, true);
}
