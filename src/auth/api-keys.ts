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

const cache = new Map<string, Map<string, string>>();

/** The tenant an API key belongs to, or null. Parsed once per distinct secret value. */
export function tenantForKey(raw: string | undefined, key: string): string | null {
  const source = raw ?? "";
  let keys = cache.get(source);
  if (!keys) {
    keys = parseApiKeys(source);
    cache.set(source, keys);
  }
  return keys.get(key) ?? null;
}
