/** Largest WebSocket frame or HTTP body accepted, in bytes. */
export const MAX_FRAME_BYTES = 1024 * 1024;
/**
 * Deepest nesting of arrays and objects accepted in a body or frame, counting the body or frame
 * itself as level 1. Deeper JSON is refused before it is parsed: it cannot be canonicalised,
 * cloned over RPC or served back without risking the stack, and no agent event needs it.
 */
export const MAX_JSON_DEPTH = 128;
/** Most events one `events` frame may carry. */
export const MAX_BATCH_EVENTS = 500;
/** Page size bounds for GET /v1/runs/:runId/events. */
export const EVENTS_PAGE_DEFAULT = 100;
export const EVENTS_PAGE_MAX = 500;
/** Page size bounds for GET /v1/runs. */
export const RUNS_PAGE_DEFAULT = 50;
export const RUNS_PAGE_MAX = 200;
/** How long a runner has to confirm a cancel before the object overrules it. */
export const CANCEL_GRACE_MS = 30_000;
/** Default lifetimes of minted tokens. */
export const VIEWER_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
export const RUNNER_TOKEN_EXTRA_MS = 24 * 60 * 60 * 1000;
/**
 * Most unexpired tokens (one by one revoked ones included, until they expire) one run holds records
 * of; past it minting is refused until some expire or all of the run's tokens are revoked.
 */
export const RUN_TOKENS_LIVE_MAX = 10_000;
/** Longest an interacting viewer token may live (the worker's INTERACT_TOKEN_MAX_TTL_MS overrides it). */
export const INTERACT_TOKEN_MAX_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** WebSocket close codes. */
export const CLOSE_NORMAL = 1000;
export const CLOSE_FENCED = 4001;
export const CLOSE_REJECTED = 4002;
/** The socket's token was revoked or expired: reconnecting needs a new token. */
export const CLOSE_CREDENTIAL = 4401;
