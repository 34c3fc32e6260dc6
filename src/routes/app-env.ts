import type { Context } from "hono";
import type { TokenClaims } from "../auth/tokens.ts";
import type { Env } from "../env.ts";
import type { PresentedToken } from "../run/token-store.ts";

/** Who is calling: a tenant by API key, or the holder of a run-scoped token. */
export type Caller = { kind: "tenant"; tenant: string } | { kind: "token"; claims: TokenClaims };

/** The run a request may act on, as the `runAccess` middleware found it. */
export interface RunAccess {
  tenant: string;
  runId: string;
  /** May send commands and approvals. */
  interact: boolean;
  /** The run token the caller presented (checked live by the run); null for an API key. */
  token: PresentedToken | null;
}

export interface AppEnv {
  Bindings: Env;
  Variables: { caller: Caller };
}

/** Routes behind `runAccess`: the run is on the context. */
export interface RunEnv {
  Bindings: Env;
  Variables: { caller: Caller; run: RunAccess };
}

/** Routes behind `tenantOnly`: only an API key, whose tenant is on the context. */
export interface TenantEnv {
  Bindings: Env;
  Variables: { caller: Caller; tenant: string };
}

export type AppContext = Context<AppEnv>;
