import { Buffer } from "node:buffer";
import { createHmac, randomBytes } from "node:crypto";

// Standard Webhooks signing: the secret is `whsec_` + base64 of the key; each delivery carries
// `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature`: `v1,` + base64 of
// HMAC-SHA256(key, `${id}.${timestamp}.${body}`). Any of the spec's verifier libraries checks it.

const SECRET_PREFIX = "whsec_";

/** A fresh signing secret: 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

export function signatureOf(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The headers of one attempt, signed at `now`. */
export function signedHeaders(secret: string, id: string, now: number, body: string): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    "content-type": "application/json",
    "user-agent": "agent-run-edge-webhooks/1",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureOf(secret, id, timestamp, body),
  };
}
