import { z } from "zod";
import type { ErrorCode } from "./errors.ts";

/**
 * The one shape of anything that can be refused: the value, or a Failure naming an error code
 * from the table in errors.ts. Domain verdicts (`accepted | duplicate | fenced | gap | conflict`)
 * stay tagged unions with `kind`, the same value on every transport (Fenced below); a refusal of
 * the request itself is a Failure.
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

/**
 * A runner superseded by a newer claim or generation — the one verdict wherever that is judged,
 * the socket or HTTP. Handlers return it as a value; each transport says it its own way: a
 * `fenced` frame then close 4001 on the runner socket, 409 `fenced` with `epoch` over HTTP
 * (fencedFailure). `epoch`: the current claim's, which the sender does not hold.
 */
export interface Fenced {
  kind: "fenced";
  epoch: number;
  reason: string;
}

export function fenced(epoch: number, reason: string): Fenced {
  return { kind: "fenced", epoch, reason };
}

/** A Fenced verdict as the HTTP edge answers it. */
export function fencedFailure(verdict: Fenced): Failure {
  return fail("fenced", verdict.reason, { epoch: verdict.epoch });
}

const isFenced = (value: unknown): value is Fenced =>
  typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "fenced";

/** A result as the HTTP edge answers it: a Fenced value becomes its Failure. */
export function fencedAsFailure<T>(result: Result<T | Fenced>): Result<Exclude<T, Fenced>> {
  if (!result.ok) return result;
  return isFenced(result.value) ? fencedFailure(result.value) : ok(result.value as Exclude<T, Fenced>);
}

/** A value zod refused, worded by zod's own formatter (one line per issue, with its path). */
export function invalid(code: ErrorCode, error: z.ZodError): Failure {
  return fail(code, z.prettifyError(error));
}
