import { z } from "zod";

export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const RunId = z.string().regex(RUN_ID_PATTERN, "run id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");

export const RUN_STATUSES = [
  "queued",
  "running",
  "waiting",
  "stalled",
  "recovering",
  "succeeded",
  "failed",
  "cancelled",
  "timed_out",
] as const;
export const RunStatus = z.enum(RUN_STATUSES).meta({ id: "RunStatus" });
export type RunStatus = z.infer<typeof RunStatus>;

export const TERMINAL_STATUSES: readonly RunStatus[] = ["succeeded", "failed", "cancelled", "timed_out"];
export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

const DAY = 24 * 60 * 60 * 1000;
/** Defaults for every run deadline, in milliseconds. */
export const DEFAULT_TIMEOUTS = {
  claimMs: 15 * 60 * 1000,
  heartbeatMs: 30 * 1000,
  takeoverMs: 5 * 60 * 1000,
  approvalMs: DAY,
  idleMs: 60 * 60 * 1000,
  runMs: 7 * DAY,
  recoverMs: 60 * 60 * 1000,
} as const;
export const DEFAULT_RETENTION_MS = 30 * DAY;
export const MAX_DEADLINE_MS = 365 * DAY;

const Millis = z.number().int().min(1).max(MAX_DEADLINE_MS);
export const Timeouts = z
  .object({
    claimMs: Millis,
    heartbeatMs: Millis,
    takeoverMs: Millis,
    approvalMs: Millis,
    idleMs: Millis,
    runMs: Millis,
    /** How long a run lost with its sandbox waits in `recovering` before it fails (runner_lost). */
    recoverMs: Millis,
  })
  .strict()
  // The example keeps generated samples (the reference page's) from showing every deadline at 1 ms.
  .meta({ id: "Timeouts", description: "A run's deadlines, in milliseconds", examples: [DEFAULT_TIMEOUTS] });
export type Timeouts = z.infer<typeof Timeouts>;

/** A run's timeouts: the ones given, the defaults for the rest. */
export function resolveTimeouts(given: { [K in keyof Timeouts]?: number | undefined } = {}): Timeouts {
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS };
  for (const name of Object.keys(timeouts) as (keyof Timeouts)[]) {
    const value = given[name];
    if (value !== undefined) timeouts[name] = value;
  }
  return timeouts;
}

export const ErrorInfo = z.object({ code: z.string().min(1).max(200), message: z.string().max(8192) }).strict();
export type ErrorInfo = z.infer<typeof ErrorInfo>;

/** Each agent process that serves a run is a generation: 1, 2, … */
export const Generation = z.number().int().min(1);

/** How a lost run may be recovered, decided from the evidence it holds (docs/PROTOCOL.md). */
export const RecoveryMode = z.enum(["restart", "resume", "ambiguous"]).meta({ id: "RecoveryMode" });
export type RecoveryMode = z.infer<typeof RecoveryMode>;

/** How a run ended. Runners may report succeeded, failed or cancelled; the object alone times runs out. */
export const RunnerOutcome = z
  .object({
    status: z.enum(["succeeded", "failed", "cancelled"]),
    exitCode: z.number().int().optional(),
    error: ErrorInfo.optional(),
  })
  .strict();
export type RunnerOutcome = z.infer<typeof RunnerOutcome>;
