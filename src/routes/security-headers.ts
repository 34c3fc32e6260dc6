import type { MiddlewareHandler } from "hono";
import { SECURITY_HEADERS } from "../security-headers.ts";

/**
 * Adds the security headers (src/security-headers.ts) to every response the worker answers, its
 * errors included; a header the route set itself is kept. A WebSocket's 101 is left as it is.
 */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (c.res.status === 101) return;
    // Responses built here have mutable headers; one passed through from elsewhere may not.
    try {
      addMissing(c.res.headers);
    } catch {
      const headers = new Headers(c.res.headers);
      addMissing(headers);
      c.res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers });
    }
  };
}

const SECURITY_ENTRIES = Object.entries(SECURITY_HEADERS);

function addMissing(headers: Headers): void {
  for (const [name, value] of SECURITY_ENTRIES) if (!headers.has(name)) headers.set(name, value);
}
