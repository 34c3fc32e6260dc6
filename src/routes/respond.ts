import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";
import { type ErrorCode, ERROR_STATUS, errorBody, type Failure, type Result } from "../protocol/index.ts";

/** An error response in the one shape every route uses. */
export function errorResponse(code: ErrorCode, message: string, extra?: Record<string, unknown>): Response {
  return Response.json({ ...errorBody(code, message), ...(extra ?? {}) }, { status: ERROR_STATUS[code] });
}

/** A Failure as its error response: the code's mapped status, its details beside `error`. */
export function failureResponse(failure: Failure): Response {
  return errorResponse(failure.code, failure.message, failure.details);
}

/**
 * The value of a Result; a Failure leaves the handler as an HTTPException carrying its error
 * response, which the app's onError answers with. So a handler's typed responses (checked
 * against its route's schemas) are its successes only.
 */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new HTTPException(ERROR_STATUS[result.code], { res: failureResponse(result) });
  return result.value;
}

/** Answers a Result's value as JSON with `status`, typed for the route's response schemas; a Failure as above. */
export function respond<T, S extends ContentfulStatusCode>(c: Context, result: Result<T>, status: S) {
  return c.json(unwrap(result) as JSONParsed<T>, status);
}
