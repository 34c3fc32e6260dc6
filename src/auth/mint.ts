import type { Env } from "../env.ts";
import type { RunApi } from "../objects/stubs.ts";
import { fail, ok, type Result, type Timeouts } from "../protocol/index.ts";
import type { TokenSpec } from "../run/token-store.ts";
import { tenantHasKey } from "./api-keys.ts";
import { interactTokenMaxMs, signToken, type TokenRole, tokenTtl } from "./tokens.ts";

export interface TokenAsk {
  role: TokenRole;
  interact?: boolean | undefined;
  ttlMs?: number | undefined;
}

export interface Minted {
  token: string;
  tokenId: string;
  role: TokenRole;
  interact: boolean;
  expiresAt: string;
}

/**
 * The one way tokens are minted: the run records each (its id, role and expiry) before it is
 * signed, so it can be checked and revoked on every use. Refused for a tenant with no API key
 * left, and for an interacting token asked to outlive INTERACT_TOKEN_MAX_TTL_MS.
 */
export async function mintRunTokens(
  env: Env,
  run: { tenant: string; runId: string; stub: RunApi; timeouts: Timeouts },
  asks: TokenAsk[],
): Promise<Result<Minted[]>> {
  if (!tenantHasKey(env.API_KEYS, run.tenant)) return fail("unauthorized", "the tenant has no API key any more");
  const maxInteract = interactTokenMaxMs(env.INTERACT_TOKEN_MAX_TTL_MS);
  const now = Date.now();
  const specs: TokenSpec[] = [];
  for (const ask of asks) {
    const interact = ask.role === "viewer" && ask.interact === true;
    const ttl = tokenTtl(ask.role, ask.ttlMs, run.timeouts);
    if (interact && ask.ttlMs !== undefined && ask.ttlMs > maxInteract)
      return fail("invalid_body", `ttlMs: an interacting token lives at most ${maxInteract} ms`);
    specs.push({ role: ask.role, interact, expiresAt: now + (interact ? Math.min(ttl, maxInteract) : ttl) });
  }
  const ids = await run.stub.issueTokens(specs);
  if (!ids.ok) return ids;
  const minted = specs.map(async (spec, index): Promise<Minted> => {
    const tokenId = ids.value[index] as string;
    const { role, interact, expiresAt: exp } = spec;
    return {
      token: await signToken(env.TOKEN_SECRET, { tenant: run.tenant, runId: run.runId, role, interact, exp, tokenId }),
      tokenId,
      role: spec.role,
      interact: spec.interact,
      expiresAt: new Date(spec.expiresAt).toISOString(),
    };
  });
  return ok(await Promise.all(minted));
}
