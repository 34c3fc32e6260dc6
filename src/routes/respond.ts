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
 * Answers a value as JSON with `status`, typed so the route's declared response schema checks it.
 * A Failure leaves the handler as an HTTPException carrying its error response (the app's
 * onError answers with it): a handler's typed responses are its successes only.
 */
export function respond<T, S extends ContentfulStatusCode>(c: Context, result: Result<T>, status: S) {
  if (!result.ok) throw new HTTPException(ERROR_STATUS[result.code], { res: failureResponse(result) });
  return c.json(result.value as JSONParsed<T>, status);
}
