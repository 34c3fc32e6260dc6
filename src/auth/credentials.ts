import { fail, ok, type Result } from "../protocol/index.ts";
import { tenantForKey } from "./api-keys.ts";
import { looksLikePoolKey } from "./pool-keys.ts";
import { looksLikeToken } from "./tokens.ts";

/**
 * The credential of an `Authorization: Bearer <credential>` header: null when the header is
 * absent or uses another scheme. The one place a bearer header is parsed.
 */
export function bearerCredential(header: string | null | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? (match[1] ?? null) : null;
}

/** What a bearer credential is, by its form: each kind opens its own routes only. */
export type CredentialKind = "pool_key" | "run_token" | "api_key";

export function credentialKind(credential: string): CredentialKind {
  if (looksLikePoolKey(credential)) return "pool_key";
  if (looksLikeToken(credential)) return "run_token";
  return "api_key";
}

/** A pool key sent anywhere but the pool socket. */
export const POOL_KEY_REFUSED = fail("forbidden", "a pool key opens the pool socket (/v1/pools/connect) only");

/**
 * The tenant of a credential that must be an API key (`route` names where, for the refusal):
 * pool keys and run tokens are refused as forbidden, an unknown key as unauthorized.
 */
export function apiKeyTenant(apiKeys: string | undefined, credential: string, route: string): Result<string> {
  const kind = credentialKind(credential);
  if (kind === "pool_key") return POOL_KEY_REFUSED;
  if (kind === "run_token") return fail("forbidden", `run tokens cannot use ${route}; send an API key`);
  const tenant = tenantForKey(apiKeys, credential);
  return tenant ? ok(tenant) : fail("unauthorized", "unknown API key");
}
