import { z } from "zod";
import {
  fail,
  INTERACT_TOKEN_MAX_TTL_MS,
  ok,
  RUNNER_TOKEN_EXTRA_MS,
  type Result,
  type Timeouts,
  VIEWER_TOKEN_TTL_MS,
} from "../protocol/index.ts";

/**
 * Run-scoped bearer tokens: `rt1.<claims>.<signature>`, both base64url, signed with
 * HMAC-SHA256 over the claims segment using TOKEN_SECRET. Each carries the id its run recorded
 * when it was minted, which the run checks on every use (src/run/token-store.ts).
 */
export type TokenRole = "runner" | "viewer";

const TokenClaims = z.object({
  tenant: z.string(),
  runId: z.string(),
  role: z.enum(["runner", "viewer"]),
  /** Viewer tokens only: may send commands and approvals. */
  interact: z.boolean(),
  /** Expiry, milliseconds since the epoch. */
  exp: z.number(),
  /** The run's record of this token; absent from tokens minted before ids existed. */
  tokenId: z.string().optional(),
});
export type TokenClaims = z.infer<typeof TokenClaims>;

const PREFIX = "rt1";
const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    keys.set(secret, key);
  }
  return key;
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** Null for anything that is not unpadded base64url (a length of 1 mod 4 encodes no bytes). */
function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  try {
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0));
  } catch {
    return null;
  }
}

export function looksLikeToken(value: string): boolean {
  return value.startsWith(`${PREFIX}.`);
}

export async function signToken(secret: string, claims: TokenClaims): Promise<string> {
  const body = toBase64Url(encoder.encode(JSON.stringify(claims)));
  const signature = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(body));
  return `${PREFIX}.${body}.${toBase64Url(new Uint8Array(signature))}`;
}

/**
 * The claims of a token signed with `secret` that has not expired at `now`; any other token is an
 * `unauthorized` Failure. The signature is checked by crypto.subtle.verify, in constant time.
 */
export async function verifyToken(secret: string, token: string, now: number): Promise<Result<TokenClaims>> {
  const invalid = fail("unauthorized", "invalid token");
  const [prefix, body, signature, ...rest] = token.split(".");
  if (prefix !== PREFIX || !body || !signature || rest.length > 0) return invalid;
  const signatureBytes = fromBase64Url(signature);
  const bodyBytes = fromBase64Url(body);
  if (!signatureBytes || !bodyBytes) return invalid;
  const valid = await crypto.subtle.verify("HMAC", await hmacKey(secret), signatureBytes, encoder.encode(body));
  if (!valid) return invalid;
  let claims: z.ZodSafeParseResult<TokenClaims>;
  try {
    claims = TokenClaims.safeParse(JSON.parse(new TextDecoder().decode(bodyBytes)));
  } catch {
    return invalid;
  }
  if (!claims.success) return invalid;
  if (claims.data.exp <= now) return fail("unauthorized", "token expired");
  return ok(claims.data);
}

/** A runner token lasts the whole run plus a takeover window and a day of slack. */
export function runnerTokenTtl(timeouts: Timeouts): number {
  return timeouts.runMs + timeouts.takeoverMs + RUNNER_TOKEN_EXTRA_MS;
}

/** How long a new token lives: `ttlMs` when asked, else by role (viewer 24 h, runner the run's). */
export function tokenTtl(role: TokenRole, ttlMs: number | undefined, timeouts: Timeouts): number {
  return ttlMs ?? (role === "runner" ? runnerTokenTtl(timeouts) : VIEWER_TOKEN_TTL_MS);
}

/** INTERACT_TOKEN_MAX_TTL_MS, or the default (7 days) when unset or not a positive whole number. */
export function interactTokenMaxMs(configured: string | undefined): number {
  const value = Number(configured);
  return configured !== undefined && Number.isSafeInteger(value) && value > 0 ? value : INTERACT_TOKEN_MAX_TTL_MS;
}
