import { type ErrorCode, ERROR_STATUS, errorBody, type Failure } from "../protocol/index.ts";

// Error responses in the one shape the API answers with (docs/PROTOCOL.md), for the routes and
// for the objects that answer HTTP themselves (a socket upgrade refused by the run object).

/** An error response: `{error: {code, message}}` with the code's status, `extra` beside `error`. */
export function errorResponse(code: ErrorCode, message: string, extra?: Record<string, unknown>): Response {
  return Response.json({ ...errorBody(code, message), ...(extra ?? {}) }, { status: ERROR_STATUS[code] });
}

/** A Failure as its error response: the code's mapped status, its details beside `error`. */
export function failureResponse(failure: Failure): Response {
  return errorResponse(failure.code, failure.message, failure.details);
}
