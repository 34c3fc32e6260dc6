import { signedHeaders } from "./signing.ts";
import type { DueDelivery } from "./store.ts";

/** What one try got: the receiver's status, or why none came. */
export interface AttemptResult {
  at: number;
  status: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * POSTs the message once, signed as of now. Redirects are not followed (a 3xx is a failed
 * attempt): the registered URL is the only place a message goes. The answer's body is not read.
 */
export async function attemptDelivery(delivery: DueDelivery, timeoutMs: number): Promise<AttemptResult> {
  const at = Date.now();
  try {
    const response = await fetch(delivery.url, {
      method: "POST",
      headers: signedHeaders(delivery.secret, delivery.webhookId, at, delivery.body),
      body: delivery.body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    const ok = response.status >= 200 && response.status < 300;
    return { at, status: response.status, error: ok ? null : `HTTP ${response.status}`, durationMs: Date.now() - at };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    const message = timedOut ? `no answer within ${timeoutMs} ms` : String(error).slice(0, 500);
    return { at, status: null, error: message, durationMs: Date.now() - at };
  }
}
