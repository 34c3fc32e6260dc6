import { createHash } from "node:crypto";

/** Parses the API_KEYS secret: comma-separated `key=tenant` pairs. */
export function parseApiKeys(raw: string | undefined): Map<string, string> {
  const keys = new Map<string, string>();
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    const tenant = pair.slice(at + 1).trim();
    if (key && tenant) keys.set(key, tenant);
  }
  return keys;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** SHA-256 of each key → its tenant, built once per distinct secret value. */
const tables = new Map<string, Map<string, string>>();

/**
 * The tenant an API key belongs to, or null. Keys are looked up by their SHA-256, never as
 * themselves: how long a lookup takes then depends only on the digest of what was sent, which
 * tells a guesser nothing about how close a guess came to a real key.
 */
export function tenantForKey(raw: string | undefined, key: string): string | null {
  const source = raw ?? "";
  let table = tables.get(source);
  if (!table) {
    table = new Map([...parseApiKeys(source)].map(([apiKey, tenant]) => [sha256(apiKey), tenant]));
    tables.set(source, table);
  }
  return table.get(sha256(key)) ?? null;
}

/** Tenants with at least one key, per distinct secret value. */
const tenantSets = new Map<string, Set<string>>();

/**
 * Whether `tenant` still has a key in API_KEYS. A tenant whose keys were all removed mints no
 * more tokens, and the tokens it minted stop working: removing a tenant's last key ends its access.
 */
export function tenantHasKey(raw: string | undefined, tenant: string): boolean {
  const source = raw ?? "";
  let tenants = tenantSets.get(source);
  if (!tenants) {
    tenants = new Set(parseApiKeys(source).values());
    tenantSets.set(source, tenants);
  }
  return tenants.has(tenant);
}
