import type { MiddlewareHandler } from "hono";
import { parseApiKeys } from "../auth/api-keys.ts";
import { bearerCredential } from "../auth/credentials.ts";
import { looksLikePoolKey, parsePoolKey } from "../auth/pool-keys.ts";
import type { Env } from "../env.ts";
import { tenantPoolsStub } from "../objects/stubs.ts";
import { fail } from "../protocol/index.ts";
import type { Access } from "./api-route.ts";
import { failureResponse } from "./respond.ts";

/** Routes behind `poolKeyOnly`: the pool key's tenant and id are on the context. */
export interface PoolEnv {
  Bindings: Env;
  Variables: { pool: { tenant: string; keyId: string } };
}

/** The pool socket's credential: a live pool key, in the Authorization header only. */
export function poolKeyOnly(): MiddlewareHandler<PoolEnv> {
  return async (c, next) => {
    const credential = bearerCredential(c.req.header("authorization"));
    if (!credential)
      return failureResponse(fail("unauthorized", "missing credentials: send Authorization: Bearer <pool key>"));
    if (!looksLikePoolKey(credential)) {
      return failureResponse(
        fail("forbidden", "the pool socket takes a pool key (POST /v1/pool-keys), not this credential"),
      );
    }
    const parts = parsePoolKey(credential);
    // Only a tenant that has an API key can have minted one: anything else never reaches an object.
    const known = parts !== null && [...parseApiKeys(c.env.API_KEYS).values()].includes(parts.tenant);
    const live = known && (await tenantPoolsStub(c.env, parts.tenant).checkKey(parts.id, parts.secretHash));
    if (!parts || !live) return failureResponse(fail("unauthorized", "unknown or revoked pool key"));
    c.set("pool", { tenant: parts.tenant, keyId: parts.id });
    await next();
  };
}

export const POOL_KEY = {
  middleware: poolKeyOnly(),
  security: [{ poolKey: [] }],
  refusals: ["unauthorized", "forbidden"],
} satisfies Access<ReturnType<typeof poolKeyOnly>>;
