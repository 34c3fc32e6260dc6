import type { Env } from "../env.ts";
import { STREAM_ROUTE_PREFIX } from "../protocol/index.ts";
import { unhandledResponse } from "./respond.ts";
import { withSecurityHeaders } from "./security-headers.ts";
import { appendToStream, catchUpRead, streamTarget } from "./streams.ts";

/**
 * A stream's appends and catch-up reads, answered ahead of the app's router: its dispatch (the
 * middleware chain, the route match, the context) cost a few percent of an append
 * (docs/BENCHMARKS.md). The same handlers and headers as the routes in streams.ts, which stay
 * the documented routes; anything else, a refusal before the handler included, is left to the
 * app (null), so every error is still answered in one place.
 */
export function streamFastPath(request: Request, env: Env): Promise<Response> | null {
  const { method } = request;
  if (method !== "POST" && method !== "GET") return null;
  const url = new URL(request.url);
  if (!url.pathname.startsWith(STREAM_ROUTE_PREFIX)) return null;
  const target = streamTarget(env, url.pathname, request.headers.get("authorization") ?? undefined);
  if (!target.ok) return null;
  const answer =
    method === "POST" ? appendToStream(request, target.value) : catchUpRead(request, url, target.value.stub);
  if (answer === null) return null;
  // As the app answers: an error nobody caught is its 500, and every response has the security headers.
  return answer.catch(unhandledResponse).then(withSecurityHeaders);
}
