import { signToken, type TokenRole } from "../auth/tokens.ts";
import type { Env } from "../env.ts";
import { RUNNER_TOKEN_EXTRA_MS, type Timeouts, VIEWER_TOKEN_TTL_MS } from "../protocol/index.ts";

/** A runner token lasts the whole run plus a takeover window and a day of slack. */
export function runnerTokenTtl(timeouts: Timeouts): number {
  return timeouts.runMs + timeouts.takeoverMs + RUNNER_TOKEN_EXTRA_MS;
}

export function mintToken(
  env: Env,
  tenant: string,
  runId: string,
  role: TokenRole,
  options: { ttlMs?: number; interact?: boolean; timeouts: Timeouts },
): Promise<string> {
  const ttl = options.ttlMs ?? (role === "runner" ? runnerTokenTtl(options.timeouts) : VIEWER_TOKEN_TTL_MS);
  return signToken(env.TOKEN_SECRET, {
    tenant,
    runId,
    role,
    interact: role === "viewer" && options.interact === true,
    exp: Date.now() + ttl,
  });
}
