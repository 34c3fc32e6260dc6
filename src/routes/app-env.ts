import type { Context } from "hono";
import type { TokenClaims } from "../auth/tokens.ts";
import type { Env } from "../env.ts";

/** Who is calling: a tenant by API key, or the holder of a run-scoped token. */
export type Caller = { kind: "tenant"; tenant: string } | { kind: "token"; claims: TokenClaims };

export interface AppEnv {
  Bindings: Env;
  Variables: { caller: Caller };
}

export type AppContext = Context<AppEnv>;
