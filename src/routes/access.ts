import type { MiddlewareHandler } from "hono";
import type { Access } from "./api-route.ts";
import type { RunEnv } from "./app-env.ts";
import { type RunRule, runAccess, tenantOnly } from "./auth.ts";

/** How callers authenticate, as the OpenAPI document names them. */
export const SECURITY_SCHEMES = {
  apiKey: {
    type: "http",
    scheme: "bearer",
    description: "A tenant's API key (`API_KEYS` lists `key=tenant` pairs). Reaches only that tenant's runs.",
  },
  runToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "rt1.<claims>.<hmac>",
    description:
      "A run token from `POST /v1/runs` or `POST /v1/runs/{runId}/tokens`: one run, one role (`runner` or `viewer`), an expiry, and an id the run checks on every use (revocable).",
  },
  poolKey: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "pk1.<tenant>.<id>.<secret>",
    description: "A pool key from `POST /v1/pool-keys`: opens the pool socket of its tenant, and nothing else.",
  },
  queryToken: {
    type: "apiKey",
    in: "query",
    name: "token",
    description:
      "A viewer token as `?token=`, for WebSockets and EventSource (browsers cannot set their headers). Only the watch and stream routes take it, and only a viewer token: API keys and runner tokens in a URL are refused (401).",
  },
} as const;

/** A tenant's API key only. */
export const API_KEY = {
  middleware: tenantOnly(),
  security: [{ apiKey: [] }],
  refusals: ["unauthorized", "forbidden"],
} satisfies Access<ReturnType<typeof tenantOnly>>;

type RunRoutesAccess = Access<MiddlewareHandler<RunEnv>>;

/** Access to one run's routes: `rule` says which credentials reach it, `security` how the document shows them. */
function accessToRun(rule: RunRule, security: RunRoutesAccess["security"]): RunRoutesAccess {
  return {
    middleware: runAccess(rule),
    security,
    refusals: ["invalid_path", "invalid_query", "unauthorized", "token_revoked", "forbidden"],
  };
}

/** A run, by its tenant's API key only (deleting it, minting its tokens). */
export const RUN_BY_API_KEY = accessToRun({ apiKey: true, tokens: [] }, [{ apiKey: [] }]);

/** Reading a run: an API key or a viewer token. */
export const RUN_READER = accessToRun({ apiKey: true, tokens: ["viewer"] }, [{ apiKey: [] }, { runToken: [] }]);

/** Reading a run from a browser: also a viewer token in `?token=` (the run stream, for EventSource). */
export const RUN_READER_IN_BROWSER = { ...RUN_READER, security: [...RUN_READER.security, { queryToken: [] }] };

/** The watch socket: as RUN_READER_IN_BROWSER; the run object checks the token as it accepts the socket. */
export const RUN_WATCHER = accessToRun(
  { apiKey: true, tokens: ["viewer"], socket: true },
  RUN_READER_IN_BROWSER.security,
);

/** Acting on a run: an API key or a viewer token minted with `interact`. */
export const RUN_OPERATOR = accessToRun({ apiKey: true, tokens: ["viewer"], needInteract: true }, [
  { apiKey: [] },
  { runToken: [] },
]);

/** The runner socket and its preflight: a runner token only, in the Authorization header. */
export const RUNNER = accessToRun({ apiKey: false, tokens: ["runner"], socket: true }, [{ runToken: [] }]);

/** A runner's HTTP routes (recovery state, checkpoints): its runner token, in the header only. */
export const RUNNER_HTTP = accessToRun({ apiKey: false, tokens: ["runner"] }, [{ runToken: [] }]);
