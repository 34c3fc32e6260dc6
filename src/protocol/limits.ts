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
/** A runner hello refused by the claim-rate bound: reconnect later (the standard "try again later"). */
export const CLOSE_TRY_AGAIN = 1013;
export const CLOSE_FENCED = 4001;
export const CLOSE_REJECTED = 4002;
/** The socket's token was revoked or expired: reconnecting needs a new token. */
export const CLOSE_CREDENTIAL = 4401;
/**
 * A viewer that fell too far behind (its unacknowledged backlog passed the bound) or a replay
 * it did not keep up with: reconnect with `after` = the last seq it holds.
 */
export const CLOSE_RECONNECT = 4008;

/**
 * Per-run bounds, each overridable by the worker var named beside it (src/run/run-limits.ts);
 * listed with their defaults in docs/SECURITY.md.
 */
export const RUN_LIMIT_DEFAULTS = {
  /** READ_PAGE_MAX_BYTES: most event bytes one read carries (events page, replay frame, stream read). */
  pageBytes: 4 * 1024 * 1024,
  /** VIEWERS_PER_RUN_MAX: viewer sockets open on one run at once. */
  viewers: 256,
  /** VIEWER_BACKLOG_MAX_BYTES: event bytes sent to a viewer past its last `ack` before it is closed. */
  viewerBacklogBytes: 16 * 1024 * 1024,
  /** APPROVALS_PENDING_MAX: approvals pending on one run at once. */
  pendingApprovals: 64,
  /** RUN_LOG_MAX_BYTES: bytes of event JSON one run's log may hold. */
  logBytes: 1024 * 1024 * 1024,
  /** CLAIMS_PER_MINUTE: claims of one run a minute, sustained (a burst of as many is allowed). */
  claimsPerMinute: 60,
} as const;
/** How long a replay waits for a viewer's `ack` once it has sent a full backlog. */
export const REPLAY_ACK_WAIT_MS = 10_000;
/** Request data at most this long (JSON bytes) travels inline in an approval summary. */
export const APPROVAL_SUMMARY_DATA_BYTES = 2048;
