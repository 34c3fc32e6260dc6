import type { MiddlewareHandler } from "hono";
import { tenantForKey } from "../auth/api-keys.ts";
import { bearerCredential } from "../auth/credentials.ts";
import { looksLikePoolKey } from "../auth/pool-keys.ts";
import { looksLikeToken, type TokenRole, verifyToken } from "../auth/tokens.ts";
import type { Env } from "../env.ts";
import { runStub } from "../objects/stubs.ts";
import { fail, ok, type Result, RunId } from "../protocol/index.ts";
import type { AppContext, AppEnv, Caller, RunAccess, RunEnv, TenantEnv } from "./app-env.ts";
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
  if (looksLikePoolKey(credential))
    return fail("forbidden", "a pool key opens the pool socket (/v1/pools/connect) only");
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

/** Who may act on a run: API keys (unless `apiKey: false`), and tokens of these roles. */
export interface RunRule {
  apiKey: boolean;
  tokens: TokenRole[];
  /** Viewer tokens must have been minted with `interact`. */
  needInteract?: boolean;
}

/** The caller's access to the run in the path, or why it has none. */
function checkRunAccess(caller: Caller, runId: string, rule: RunRule): Result<RunAccess> {
  if (!RunId.safeParse(runId).success)
    return fail("invalid_query", "run id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
  if (caller.kind === "tenant") {
    if (!rule.apiKey) return fail("forbidden", "this route takes a runner token, not an API key");
    return ok({ tenant: caller.tenant, runId, interact: true });
  }
  const { claims } = caller;
  if (!rule.tokens.includes(claims.role)) return fail("forbidden", `a ${claims.role} token cannot use this route`);
  if (claims.runId !== runId) return fail("forbidden", "this token belongs to another run");
  if (rule.needInteract && !claims.interact) return fail("forbidden", "this viewer token cannot send commands");
  return ok({ tenant: claims.tenant, runId, interact: claims.role === "viewer" && claims.interact });
}

/** Puts the run of the path's `:runId` on the context (`c.var.run`) when the caller may act on it. */
export function runAccess(rule: RunRule): MiddlewareHandler<RunEnv> {
  return async (c, next) => {
    const access = checkRunAccess(c.get("caller"), c.req.param("runId") ?? "", rule);
    if (!access.ok) return failureResponse(access);
    c.set("run", access.value);
    await next();
  };
}

/** Routes only a tenant's API key may call; the tenant goes on the context (`c.var.tenant`). */
export function tenantOnly(): MiddlewareHandler<TenantEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    if (caller.kind !== "tenant")
      return failureResponse(fail("forbidden", `a ${caller.claims.role} token cannot call the API`));
    c.set("tenant", caller.tenant);
    await next();
  };
}

/** The run's object, for a request `runAccess` let through. */
export function runOf(c: { env: Env; var: { run: RunAccess } }) {
  return runStub(c.env, c.var.run.tenant, c.var.run.runId);
}
