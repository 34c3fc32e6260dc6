import type { MiddlewareHandler } from "hono";
import { SECURITY_HEADERS } from "../security-headers.ts";

/**
 * Adds the security headers (src/security-headers.ts) to every response the worker answers, its
 * errors included; a header the route set itself is kept. A WebSocket's 101 is left as it is.
 */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const secured = withSecurityHeaders(c.res);
    if (secured !== c.res) c.res = secured;
  };
}

const SECURITY_ENTRIES = Object.entries(SECURITY_HEADERS);

/** The response with every security header it lacks: itself, or a copy when its headers are immutable. */
export function withSecurityHeaders(response: Response): Response {
  if (response.status === 101) return response;
  // Responses built here have mutable headers; one passed through from elsewhere may not.
  try {
    addMissing(response.headers);
    return response;
  } catch {
    const headers = new Headers(response.headers);
    addMissing(headers);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}

function addMissing(headers: Headers): void {
  for (const [name, value] of SECURITY_ENTRIES) if (!headers.has(name)) headers.set(name, value);
}
