import type { MiddlewareHandler } from "hono";
import { tenantForKey } from "../auth/api-keys.ts";
import { looksLikeToken, type TokenRole, verifyToken } from "../auth/tokens.ts";
import { RunId } from "../protocol/index.ts";
import type { AppContext, AppEnv, Caller } from "./app-env.ts";
import { errorResponse } from "./respond.ts";

// Routes a browser reaches without custom headers: WebSockets, and the run stream for EventSource.
const QUERY_TOKEN_ROUTE = /^\/v1\/runs\/[^/]+\/(runner|watch|stream)$/;

function bearer(c: AppContext): string | null {
  const header = c.req.header("authorization");
  if (header?.startsWith("Bearer ")) return header.slice("Bearer ".length).trim();
  if (QUERY_TOKEN_ROUTE.test(c.req.path)) return c.req.query("token") ?? null;
  return null;
}

/** Resolves the caller from an API key or a run token; 401 when neither is valid. */
export function authenticate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const credential = bearer(c);
    if (!credential)
      return errorResponse("unauthorized", "missing credentials: send Authorization: Bearer <key or token>");
    let caller: Caller | null = null;
    if (looksLikeToken(credential)) {
      const verified = await verifyToken(c.env.TOKEN_SECRET, credential, Date.now());
      if (!verified.ok)
        return errorResponse("unauthorized", verified.reason === "expired" ? "token expired" : "invalid token");
      caller = { kind: "token", claims: verified.claims };
    } else {
      const tenant = tenantForKey(c.env.API_KEYS, credential);
      if (tenant) caller = { kind: "tenant", tenant };
    }
    if (!caller) return errorResponse("unauthorized", "unknown API key");
    c.set("caller", caller);
    await next();
  };
}

export interface RunAccess {
  tenant: string;
  runId: string;
  /** May send commands and approvals. */
  interact: boolean;
}

/**
 * Checks the caller may act on the run in the path. `roles` lists the token roles allowed
 * besides API keys (`apiKey: false` for runner-only routes). Returns a Response when refused.
 */
export function runAccess(
  c: AppContext,
  roles: { apiKey: boolean; tokens: TokenRole[]; needInteract?: boolean },
): RunAccess | Response {
  const runId = c.req.param("runId") ?? "";
  if (!RunId.safeParse(runId).success)
    return errorResponse("invalid_query", "run id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
  const caller = c.get("caller");
  if (caller.kind === "tenant") {
    if (!roles.apiKey) return errorResponse("forbidden", "this route takes a runner token, not an API key");
    return { tenant: caller.tenant, runId, interact: true };
  }
  const { claims } = caller;
  if (!roles.tokens.includes(claims.role))
    return errorResponse("forbidden", `a ${claims.role} token cannot use this route`);
  if (claims.runId !== runId) return errorResponse("forbidden", "this token belongs to another run");
  if (roles.needInteract && !claims.interact)
    return errorResponse("forbidden", "this viewer token cannot send commands");
  return { tenant: claims.tenant, runId, interact: claims.role === "viewer" && claims.interact };
}

/** Routes only a tenant's API key may call. */
export function tenantOf(c: AppContext): string | Response {
  const caller = c.get("caller");
  if (caller.kind !== "tenant") return errorResponse("forbidden", `a ${caller.claims.role} token cannot call the API`);
  return caller.tenant;
}
