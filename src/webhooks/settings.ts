import type { Env } from "../env.ts";

/** How the webhook object delivers: from the vars, with the documented defaults (docs/WEBHOOKS.md). */
export interface WebhookSettings {
  /** The first retry's delay; each later one doubles, up to MAX_RETRY_DELAY_MS. */
  retryBaseMs: number;
  /** How long after its creation (or redelivery) a delivery is retried before it is failed. */
  retryForMs: number;
  /** How long one attempt waits for the receiver's answer. */
  attemptTimeoutMs: number;
  allowHttp: boolean;
}

export const DEFAULT_RETRY_BASE_MS = 5_000;
export const DEFAULT_RETRY_FOR_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;
export const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;
/** Each delay is stretched by up to this fraction at random, so receivers are not hit in lockstep. */
export const RETRY_JITTER = 0.25;
/** Finished deliveries are kept this long for the log, then dropped. */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

function positive(text: string | undefined, fallback: number): number {
  const value = Number(text);
  return text !== undefined && text !== "" && Number.isInteger(value) && value > 0 ? value : fallback;
}

export function webhookSettings(env: Env): WebhookSettings {
  return {
    retryBaseMs: positive(env.WEBHOOK_RETRY_BASE_MS, DEFAULT_RETRY_BASE_MS),
    retryForMs: positive(env.WEBHOOK_RETRY_FOR_MS, DEFAULT_RETRY_FOR_MS),
    attemptTimeoutMs: positive(env.WEBHOOK_ATTEMPT_TIMEOUT_MS, DEFAULT_ATTEMPT_TIMEOUT_MS),
    allowHttp: env.ALLOW_HTTP_WEBHOOKS === "true",
  };
}

/** The wait before the try after `attempts` failed ones: base·2^(attempts−1), capped, plus jitter. */
export function retryDelay(settings: WebhookSettings, attempts: number, random = Math.random()): number {
  const plain = Math.min(MAX_RETRY_DELAY_MS, settings.retryBaseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(plain * (1 + RETRY_JITTER * random));
}
