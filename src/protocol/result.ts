import { z } from "zod";
import type { ErrorCode } from "./errors.ts";

/**
 * The one shape of anything that can be refused: the value, or a Failure naming an error code
 * from the table in errors.ts. Domain verdicts (`accepted | duplicate | stale_epoch | gap |
 * conflict`) stay tagged unions with `kind`; a refusal is always a Failure.
 */
export type Result<T> = Ok<T> | Failure;

export interface Ok<T> {
  ok: true;
  value: T;
}

/** A refused operation as a value, so objects can answer RPC calls without throwing. */
export interface Failure {
  ok: false;
  code: ErrorCode;
  message: string;
  /** Extra fields some failures carry (e.g. the final status of a purged run). */
  details?: { [key: string]: string | number | boolean | null };
}

export function ok<T>(value: T): Ok<T> {
  return { ok: true, value };
}

export function fail(code: ErrorCode, message: string, details?: Failure["details"]): Failure {
  return details ? { ok: false, code, message, details } : { ok: false, code, message };
}

/** A value zod refused, worded by zod's own formatter (one line per issue, with its path). */
export function invalid(code: ErrorCode, error: z.ZodError): Failure {
  return fail(code, z.prettifyError(error));
}
