import type { MiddlewareHandler } from "hono";
import { tenantHasKey } from "../auth/api-keys.ts";
import { apiKeyTenant, bearerCredential, credentialKind, POOL_KEY_REFUSED } from "../auth/credentials.ts";
import { interactTokenMaxMs, type TokenClaims, type TokenRole, verifyToken } from "../auth/tokens.ts";
import type { Env } from "../env.ts";
import { runStub } from "../objects/stubs.ts";
import { fail, ok, type Result, RunId } from "../protocol/index.ts";
import type { AppContext, AppEnv, Caller, RunAccess, RunEnv, TenantEnv } from "./app-env.ts";
import { failureResponse } from "./respond.ts";

// Routes a browser reaches without custom headers: the watch socket, and the run stream and the
// AG-UI stream for EventSource. `?token=` there takes a viewer token only: a URL ends up in logs and histories,
// and a viewer token is the one credential scoped to reading a single run. It is read on the
// runner route too, only to refuse a runner token sent that way with a message that says why.
const QUERY_TOKEN_ROUTE = /^\/v1\/runs\/[^/]+\/(runner|watch|stream|agui)$/;
const QUERY_TOKEN_REFUSED = fail(
  "unauthorized",
  "?token= takes only viewer tokens; send API keys and runner tokens as Authorization: Bearer",
);

function credentialOf(c: AppContext): { credential: string; inQuery: boolean } | null {
  const fromHeader = bearerCredential(c.req.header("authorization"));
  if (fromHeader) return { credential: fromHeader, inQuery: false };
  const fromQuery = QUERY_TOKEN_ROUTE.test(c.req.path) ? c.req.query("token") : undefined;
  return fromQuery ? { credential: fromQuery, inQuery: true } : null;
}

/** Who is calling: a tenant by API key, or the holder of a valid run token whose tenant still has a key. */
async function identify(c: AppContext): Promise<Result<Caller>> {
  const found = credentialOf(c);
  if (!found) return fail("unauthorized", "missing credentials: send Authorization: Bearer <key or token>");
  const { credential, inQuery } = found;
  const kind = credentialKind(credential);
  // A pool key is refused as one before anything else, wherever it was sent.
  if (kind === "pool_key") return POOL_KEY_REFUSED;
  if (kind === "run_token") {
    const claims = await verifyToken(c.env.TOKEN_SECRET, credential, Date.now());
    if (!claims.ok) return claims;
    if (inQuery && claims.value.role !== "viewer") return QUERY_TOKEN_REFUSED;
    if (!tenantHasKey(c.env.API_KEYS, claims.value.tenant))
      return fail("unauthorized", "the token's tenant has no API key any more");
    return ok({ kind: "token", claims: claims.value });
  }
  if (inQuery) return QUERY_TOKEN_REFUSED;
  const tenant = apiKeyTenant(c.env.API_KEYS, credential, c.req.path);
  return tenant.ok ? ok({ kind: "tenant", tenant: tenant.value }) : tenant;
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
  /**
   * A WebSocket route: on an upgrade the run object checks the token itself as it accepts the
   * socket (where no revocation can slip between check and accept), so the worker does not ask.
   */
  socket?: boolean;
}

/**
 * Whether a viewer token may still interact: minted with `interact`, and with no more of its life
 * left than an interacting token may have (a longer one came from before the bound, or the bound
 * was lowered since).
 */
function mayInteract(claims: TokenClaims, maxInteractMs: number): Result<boolean> {
  if (claims.role !== "viewer" || !claims.interact) return ok(false);
  if (claims.exp - Date.now() > maxInteractMs)
    return fail("forbidden", `this token outlives the ${maxInteractMs} ms interacting tokens may live; mint a new one`);
  return ok(true);
}

/** The caller's access to the run in the path, or why it has none. */
function checkRunAccess(caller: Caller, runId: string, rule: RunRule, maxInteractMs: number): Result<RunAccess> {
  if (!RunId.safeParse(runId).success)
    return fail("invalid_path", "run id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
  if (caller.kind === "tenant") {
    if (!rule.apiKey) return fail("forbidden", "this route takes a runner token, not an API key");
    return ok({ tenant: caller.tenant, runId, interact: true, token: null });
  }
  const { claims } = caller;
  if (!rule.tokens.includes(claims.role)) return fail("forbidden", `a ${claims.role} token cannot use this route`);
  if (claims.runId !== runId) return fail("forbidden", "this token belongs to another run");
  const interact = mayInteract(claims, maxInteractMs);
  if (rule.needInteract && !claims.interact) return fail("forbidden", "this viewer token cannot send commands");
  if (rule.needInteract && !interact.ok) return interact;
  const token = { tokenId: claims.tokenId ?? null, exp: claims.exp };
  return ok({ tenant: claims.tenant, runId, interact: interact.ok && interact.value, token });
}

/**
 * Puts the run of the path's `:runId` on the context (`c.var.run`) when the caller may act on it.
 * A token is also checked by the run itself, which knows whether it was revoked.
 */
export function runAccess(rule: RunRule): MiddlewareHandler<RunEnv> {
  return async (c, next) => {
    const maxInteractMs = interactTokenMaxMs(c.env.INTERACT_TOKEN_MAX_TTL_MS);
    const access = checkRunAccess(c.get("caller"), c.req.param("runId") ?? "", rule, maxInteractMs);
    if (!access.ok) return failureResponse(access);
    const { token } = access.value;
    const upgrade = rule.socket === true && c.req.header("upgrade")?.toLowerCase() === "websocket";
    if (token && !upgrade) {
      const live = await runOf({ env: c.env, var: { run: access.value } }).checkToken(token);
      if (!live.ok) return failureResponse(live);
    }
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
