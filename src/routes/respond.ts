import type { z } from "zod";
import {
  type ErrorCode,
  ERROR_STATUS,
  errorBody,
  type Failure,
  invalid,
  MAX_FRAME_BYTES,
  ok,
  parseJson,
  type Result,
} from "../protocol/index.ts";
import type { AppContext } from "./app-env.ts";
import { readLimitedBody } from "./body-limit.ts";

/** An error response in the one shape every route uses. */
export function errorResponse(code: ErrorCode, message: string, extra?: Record<string, unknown>): Response {
  return Response.json({ ...errorBody(code, message), ...(extra ?? {}) }, { status: ERROR_STATUS[code] });
}

/** A Failure as its error response: the code's mapped status, its details beside `error`. */
export function failureResponse(failure: Failure): Response {
  return errorResponse(failure.code, failure.message, failure.details);
}

/** Answers a Failure with its mapped status, a value as JSON with `status`. */
export function respond<T>(result: Result<T>, status = 200): Response {
  return result.ok ? Response.json(result.value, { status }) : failureResponse(result);
}

/**
 * Reads and validates a JSON body of at most MAX_FRAME_BYTES; an empty body counts as `{}`.
 * Reading stops at the limit, with or without a Content-Length.
 */
export async function readBody<S extends z.ZodType>(c: AppContext, schema: S): Promise<Result<z.infer<S>>> {
  const bytes = await readLimitedBody(c.req.raw, MAX_FRAME_BYTES);
  if (!bytes.ok) return bytes;
  const text = new TextDecoder().decode(bytes.value);
  const json = text.trim() === "" ? ok({}) : parseJson(text, "invalid_body");
  if (!json.ok) return json;
  const parsed = schema.safeParse(json.value);
  return parsed.success ? ok(parsed.data) : invalid("invalid_body", parsed.error);
}

export function readQuery<S extends z.ZodType>(c: AppContext, schema: S): Result<z.infer<S>> {
  const parsed = schema.safeParse(c.req.query());
  return parsed.success ? ok(parsed.data) : invalid("invalid_query", parsed.error);
}
