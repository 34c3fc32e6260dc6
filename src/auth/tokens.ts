/**
 * Run-scoped bearer tokens: `rt1.<claims>.<signature>`, both base64url, signed with
 * HMAC-SHA256 over the claims segment using TOKEN_SECRET.
 */
export type TokenRole = "runner" | "viewer";

export interface TokenClaims {
  tenant: string;
  runId: string;
  role: TokenRole;
  /** Viewer tokens only: may send commands and approvals. */
  interact: boolean;
  /** Expiry, milliseconds since the epoch. */
  exp: number;
}

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

function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

export function looksLikeToken(value: string): boolean {
  return value.startsWith(`${PREFIX}.`);
}

export async function signToken(secret: string, claims: TokenClaims): Promise<string> {
  const body = toBase64Url(encoder.encode(JSON.stringify(claims)));
  const signature = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(body));
  return `${PREFIX}.${body}.${toBase64Url(new Uint8Array(signature))}`;
}

export type VerifyResult =
  | { ok: true; claims: TokenClaims }
  | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

export async function verifyToken(secret: string, token: string, now: number): Promise<VerifyResult> {
  const [prefix, body, signature, ...rest] = token.split(".");
  if (prefix !== PREFIX || !body || !signature || rest.length > 0) return { ok: false, reason: "malformed" };
  const signatureBytes = fromBase64Url(signature);
  const bodyBytes = fromBase64Url(body);
  if (!signatureBytes || !bodyBytes) return { ok: false, reason: "malformed" };
  const valid = await crypto.subtle.verify("HMAC", await hmacKey(secret), signatureBytes, encoder.encode(body));
  if (!valid) return { ok: false, reason: "bad_signature" };
  let claims: TokenClaims;
  try {
    claims = JSON.parse(new TextDecoder().decode(bodyBytes)) as TokenClaims;
  } catch {
    return { ok: false, reason: "malformed" };
  }
  if (typeof claims.exp !== "number" || claims.exp <= now) return { ok: false, reason: "expired" };
  return { ok: true, claims };
}
