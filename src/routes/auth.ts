import type { MiddlewareHandler } from "hono";
import { tenantForKey } from "../auth/api-keys.ts";
import { bearerCredential } from "../auth/credentials.ts";
import { looksLikeToken, type TokenRole, verifyToken } from "../auth/tokens.ts";
import { fail, ok, type Result, RunId } from "../protocol/index.ts";
import type { AppContext, AppEnv, Caller } from "./app-env.ts";
import { failureResponse } from "./respond.ts";

// Routes a browser reaches without custom headers: WebSockets, and the run stream for EventSource.
const QUERY_TOKEN_ROUTE = /^\/v1\/runs\/[^/]+\/(runner|watch|stream)$/;

function credentialOf(c: AppContext): string | null {
  const fromHeader = bearerCredential(c.req.header("authorization"));
  if (fromHeader) return fromHeader;
  if (QUERY_TOKEN_ROUTE.test(c.req.path)) return c.req.query("token") ?? null;
  return null;
}

/** Who is calling: a tenant by API key, or the holder of a valid run token. */
async function identify(c: AppContext): Promise<Result<Caller>> {
  const credential = credentialOf(c);
  if (!credential) return fail("unauthorized", "missing credentials: send Authorization: Bearer <key or token>");
  if (looksLikeToken(credential)) {
    const claims = await verifyToken(c.env.TOKEN_SECRET, credential, Date.now());
    return claims.ok ? ok({ kind: "token", claims: claims.value }) : claims;
  }
  const tenant = tenantForKey(c.env.API_KEYS, credential);
  return tenant ? ok({ kind: "tenant", tenant }) : fail("unauthorized", "unknown API key");
}

/** Resolves the caller from an API key or a run token; 401 when neither is valid. */
export function authenticate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = await identify(c);
    if (!caller.ok) return failureResponse(caller);
    c.set("caller", caller.value);
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
 * besides API keys (`apiKey: false` for runner-only routes).
 */
export function runAccess(
  c: AppContext,
  roles: { apiKey: boolean; tokens: TokenRole[]; needInteract?: boolean },
): Result<RunAccess> {
  const runId = c.req.param("runId") ?? "";
  if (!RunId.safeParse(runId).success)
    return fail("invalid_query", "run id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
  const caller = c.get("caller");
  if (caller.kind === "tenant") {
    if (!roles.apiKey) return fail("forbidden", "this route takes a runner token, not an API key");
    return ok({ tenant: caller.tenant, runId, interact: true });
  }
  const { claims } = caller;
  if (!roles.tokens.includes(claims.role)) return fail("forbidden", `a ${claims.role} token cannot use this route`);
  if (claims.runId !== runId) return fail("forbidden", "this token belongs to another run");
  if (roles.needInteract && !claims.interact) return fail("forbidden", "this viewer token cannot send commands");
  return ok({ tenant: claims.tenant, runId, interact: claims.role === "viewer" && claims.interact });
}

/** Routes only a tenant's API key may call. */
export function tenantOf(c: AppContext): Result<string> {
  const caller = c.get("caller");
  if (caller.kind !== "tenant") return fail("forbidden", `a ${caller.claims.role} token cannot call the API`);
  return ok(caller.tenant);
}
