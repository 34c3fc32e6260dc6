/**
 * Stream-Cursor values (PROTOCOL §8.1): the number of cursor intervals since 2024-10-09, and
 * never at or below the cursor the client echoed, so cached live responses cannot loop.
 */
const CURSOR_EPOCH_MS = Date.UTC(2024, 9, 9);
/** One tick of the cursor clock (§8.1 suggests 20 s). Not a wait: how long reads wait is live-waits.ts. */
const CURSOR_INTERVAL_MS = 20_000;

export function responseCursor(clientCursor: string | undefined, now = Date.now()): string {
  const current = Math.floor((now - CURSOR_EPOCH_MS) / CURSOR_INTERVAL_MS);
  if (clientCursor === undefined || !/^\d{1,15}$/.test(clientCursor)) return String(current);
  const echoed = Number(clientCursor);
  if (echoed < current) return String(current);
  // Jump ahead by 1..3600 seconds' worth of intervals.
  const jitterSeconds = 1 + Math.floor(Math.random() * 3600);
  return String(echoed + Math.max(1, Math.ceil((jitterSeconds * 1000) / CURSOR_INTERVAL_MS)));
}
