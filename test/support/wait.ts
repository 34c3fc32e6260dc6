/**
 * Bounded waiting. Every wait names what it waits for; when the bound runs out the test fails
 * with that name and the last observed value, never silently.
 */
export async function waitFor<T>(
  description: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError ? ` (last error: ${(lastError as Error).message})` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${description}${detail}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
