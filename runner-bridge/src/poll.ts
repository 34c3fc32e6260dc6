/**
 * The bridge's one bounded wait: asks `probe` every `intervalMs` until it answers with a value
 * (anything but null, undefined or false) or `timeoutMs` has passed. Resolves to that value, or
 * to null when the time ran out — the caller says what never happened.
 */
export async function pollUntil<T>(
  probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs: number,
  intervalMs = 25,
): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) return null;
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
