import type { Env } from "../env.ts";
import { RUN_LIMIT_DEFAULTS } from "../protocol/index.ts";

/** The bounds one run object enforces (RUN_LIMIT_DEFAULTS says what each is). */
export type RunLimits = { -readonly [K in keyof typeof RUN_LIMIT_DEFAULTS]: number };

const VARS: { [K in keyof RunLimits]: keyof Env } = {
  pageBytes: "READ_PAGE_MAX_BYTES",
  viewers: "VIEWERS_PER_RUN_MAX",
  viewerBacklogBytes: "VIEWER_BACKLOG_MAX_BYTES",
  pendingApprovals: "APPROVALS_PENDING_MAX",
  logBytes: "RUN_LOG_MAX_BYTES",
  claimsPerMinute: "CLAIMS_PER_MINUTE",
};

/** Each bound from its var when that is a positive whole number, else its default. */
export function runLimits(env: Partial<Env>): RunLimits {
  const limits = { ...RUN_LIMIT_DEFAULTS } as RunLimits;
  for (const key of Object.keys(VARS) as (keyof RunLimits)[]) {
    const raw = env[VARS[key]];
    const value = typeof raw === "string" && /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
    if (Number.isSafeInteger(value) && value > 0) limits[key] = value;
  }
  return limits;
}
