/**
 * Stream-Cursor values (PROTOCOL §8.1): the number of 20-second intervals since 2024-10-09, and
 * never at or below the cursor the client echoed, so cached live responses cannot loop.
 */
const CURSOR_EPOCH_MS = Date.UTC(2024, 9, 9);
const INTERVAL_MS = 20_000;

export function responseCursor(clientCursor: string | undefined, now = Date.now()): string {
  const current = Math.floor((now - CURSOR_EPOCH_MS) / INTERVAL_MS);
  if (clientCursor === undefined || !/^\d{1,15}$/.test(clientCursor)) return String(current);
  const echoed = Number(clientCursor);
  if (echoed < current) return String(current);
  // Jump ahead by 1..3600 seconds' worth of intervals.
  const jitterSeconds = 1 + Math.floor(Math.random() * 3600);
  return String(echoed + Math.max(1, Math.ceil((jitterSeconds * 1000) / INTERVAL_MS)));
}
