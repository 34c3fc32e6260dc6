/**
 * The credential of an `Authorization: Bearer <credential>` header: null when the header is
 * absent or uses another scheme. The one place a bearer header is parsed.
 */
export function bearerCredential(header: string | null | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? (match[1] ?? null) : null;
}
