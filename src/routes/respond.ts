import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";
import { errorResponse, failureResponse } from "../http/errors.ts";
import { ERROR_STATUS, type Result } from "../protocol/index.ts";

export { errorResponse, failureResponse } from "../http/errors.ts";

/** The answer to an error no handler caught: a refusal thrown as an HTTPException carries its own. */
export function unhandledResponse(error: unknown): Response {
  if (error instanceof HTTPException) return error.getResponse();
  console.error("unhandled", error);
  return errorResponse("internal", "internal error");
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
