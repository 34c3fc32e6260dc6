/**
 * The per-run bounds the edge project runs with (vitest.config.ts), lowered from their defaults
 * so a test reaches each with a few MiB; the tests read them from here.
 */
const MiB = 1024 * 1024;

export const EDGE_LIMITS = {
  pageBytes: 1 * MiB,
  viewers: 200,
  viewerBacklogBytes: 3 * MiB,
  pendingApprovals: 4,
  logBytes: 8 * MiB,
  /** A burst of 8, then one every 7.5 s: a test's burst is refused however slow the machine. */
  claimsPerMinute: 8,
} as const;

export const EDGE_LIMIT_VARS = {
  READ_PAGE_MAX_BYTES: String(EDGE_LIMITS.pageBytes),
  VIEWERS_PER_RUN_MAX: String(EDGE_LIMITS.viewers),
  VIEWER_BACKLOG_MAX_BYTES: String(EDGE_LIMITS.viewerBacklogBytes),
  APPROVALS_PENDING_MAX: String(EDGE_LIMITS.pendingApprovals),
  RUN_LOG_MAX_BYTES: String(EDGE_LIMITS.logBytes),
  CLAIMS_PER_MINUTE: String(EDGE_LIMITS.claimsPerMinute),
};
