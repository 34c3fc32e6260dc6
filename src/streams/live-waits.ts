import type { Env } from "../env.ts";

/**
 * How long live reads wait for data (in memory, in the object holding the log: src/log/waiters.ts).
 * The long-poll wait is configurable; SSE responses have a fixed lifetime and keep-alive.
 */

/** Long-poll wait when STREAM_LONG_POLL_MS is not set. */
const DEFAULT_LONG_POLL_MS = 20_000;
/** An SSE response ends after about a minute so CDNs can collapse reconnecting clients (§8.2). */
export const SSE_LIFETIME_MS = 60_000;
/** How long each SSE wait for data lasts before a keep-alive control event. */
export const SSE_WAIT_MS = 15_000;

/** How long a `live=long-poll` read waits at the tail before answering 204. */
export function longPollMs(env: Env): number {
  const configured = Number(env.STREAM_LONG_POLL_MS);
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_LONG_POLL_MS;
}
