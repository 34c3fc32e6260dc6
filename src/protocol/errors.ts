import { z } from "zod";
import { RunStatus } from "./run.ts";

/**
 * Every error code the control plane can answer with, and the HTTP status it maps to.
 * WebSocket error frames use the same codes.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_query: 400,
  /** A path segment (a run id, a request id) that is not one. */
  invalid_path: 400,
  invalid_body: 422,
  invalid_frame: 400,
  invalid_request: 400,
  unauthorized: 401,
  token_revoked: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  stale: 409,
  terminal_run: 409,
  not_terminal: 409,
  outcome_conflict: 409,
  not_claimed: 409,
  fenced: 409,
  not_recovering: 409,
  not_resumable: 409,
  checkpoint_ahead: 409,
  no_checkpoint: 404,
  checkpoint_too_large: 413,
  digest_mismatch: 400,
  method_not_allowed: 405,
  gone: 410,
  payload_too_large: 413,
  quota_exceeded: 413,
  too_many_viewers: 429,
  viewer_behind: 409,
  too_many_approvals: 429,
  rate_limited: 429,
  too_many_tokens: 429,
  /** A webhook URL that is not https: (nor http: to loopback where ALLOW_HTTP_WEBHOOKS allows it). */
  invalid_webhook_url: 422,
  too_many_webhooks: 429,
  /** The endpoint answered 410 Gone once: nothing is sent to it again. */
  webhook_disabled: 409,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ErrorCode = z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]);

/**
 * A refusal's body: `{error: {code, message}}`. Some add fields beside `error`: a purged run's
 * `410` says how it ended (`status`, and `finishedAt` on reads).
 */
export function errorResponseSchema<C extends ErrorCode>(codes: readonly C[]) {
  return z.object({
    error: z.object({ code: z.enum(codes), message: z.string() }),
    status: RunStatus.optional(),
    finishedAt: z.iso.datetime().optional(),
  });
}
export const ErrorResponse = errorResponseSchema(ErrorCode.options).meta({ id: "ErrorResponse" });
export type ErrorBody = z.infer<typeof ErrorResponse>;

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { error: { code, message } };
}
