/**
 * The security headers of every response: the worker's (src/routes/security-headers.ts adds
 * them) and the static assets', which Workers Static Assets serve without the worker for most
 * paths: the console build writes them into console/dist/_headers (HEADERS_FILE), which the
 * asset server applies (and `npm run serve`'s assets router too).
 *
 * The console and the API reference page load only their own origin's files, run no inline
 * script and are never framed. Share links carry their token in the URL fragment, which is never
 * sent, and no-referrer keeps the page's URL out of every request it makes.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

/** The `_headers` file of the static assets: every path gets SECURITY_HEADERS. */
export function headersFile(): string {
  const lines = Object.entries(SECURITY_HEADERS).map(([name, value]) => `  ${name}: ${value}`);
  return ["# Written by console/build.ts from src/security-headers.ts; edit that file.", "/*", ...lines, ""].join("\n");
}
