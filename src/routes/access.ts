import type { Access } from "./api-route.ts";
import { runAccess, tenantOnly } from "./auth.ts";

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
      "A run token from `POST /v1/runs` or `POST /v1/runs/{runId}/tokens`: one run, one role (`runner` or `viewer`), an expiry.",
  },
  queryToken: {
    type: "apiKey",
    in: "query",
    name: "token",
    description:
      "The same credential as `?token=`, for WebSockets and EventSource (browsers cannot set their headers). Only the runner, watch and stream routes take it.",
  },
} as const;

const runRefusals = ["invalid_query", "unauthorized", "forbidden"] as const;

/** A tenant's API key only. */
export const API_KEY = {
  middleware: tenantOnly(),
  security: [{ apiKey: [] }],
  refusals: ["unauthorized", "forbidden"],
} satisfies Access<ReturnType<typeof tenantOnly>>;

/** A run, by its tenant's API key only (deleting it, minting its tokens). */
export const RUN_BY_API_KEY = {
  middleware: runAccess({ apiKey: true, tokens: [] }),
  security: [{ apiKey: [] }],
  refusals: runRefusals,
} satisfies Access<ReturnType<typeof runAccess>>;

/** Reading a run: an API key or a viewer token. */
export const RUN_READER = {
  middleware: runAccess({ apiKey: true, tokens: ["viewer"] }),
  security: [{ apiKey: [] }, { runToken: [] }],
  refusals: runRefusals,
} satisfies Access<ReturnType<typeof runAccess>>;

/** Reading a run from a browser: also `?token=` (the watch socket, the run stream for EventSource). */
export const RUN_READER_IN_BROWSER = {
  ...RUN_READER,
  security: [{ apiKey: [] }, { runToken: [] }, { queryToken: [] }],
} satisfies Access<ReturnType<typeof runAccess>>;

/** Acting on a run: an API key or a viewer token minted with `interact`. */
export const RUN_OPERATOR = {
  middleware: runAccess({ apiKey: true, tokens: ["viewer"], needInteract: true }),
  security: [{ apiKey: [] }, { runToken: [] }],
  refusals: runRefusals,
} satisfies Access<ReturnType<typeof runAccess>>;

/** The runner socket and its preflight: a runner token only, in the header or `?token=`. */
export const RUNNER = {
  middleware: runAccess({ apiKey: false, tokens: ["runner"] }),
  security: [{ runToken: [] }, { queryToken: [] }],
  refusals: runRefusals,
} satisfies Access<ReturnType<typeof runAccess>>;
