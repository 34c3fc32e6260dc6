import { apiKeyTenant, bearerCredential } from "../auth/credentials.ts";
import type { Env } from "../env.ts";
import {
  ANONYMOUS_STREAM_TENANT,
  ERROR_STATUS,
  errorBody,
  type Failure,
  fail,
  ok,
  type Result,
  STREAM_HEADERS as H,
} from "../protocol/index.ts";

/** HTTP of Durable Streams responses: CORS on every one, the one error path, and who the caller is. */

/** Headers every stream response carries: CORS (PROTOCOL §10.7 browser safety included). */
export const BASE_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, HEAD, PUT, POST, DELETE, OPTIONS",
  "access-control-allow-headers": [
    "authorization",
    "content-type",
    "if-none-match",
    H.seq,
    H.ttl,
    H.expiresAt,
    H.closed,
    H.producerId,
    H.producerEpoch,
    H.producerSeq,
    H.forkedFrom,
    H.forkOffset,
    H.forkSubOffset,
  ].join(", "),
  "access-control-expose-headers": [
    H.nextOffset,
    H.cursor,
    H.upToDate,
    H.closed,
    H.ttl,
    H.expiresAt,
    H.sseEncoding,
    H.producerEpoch,
    H.producerSeq,
    H.producerExpectedSeq,
    H.producerReceivedSeq,
    "etag",
    "location",
    "content-type",
  ].join(", "),
  "access-control-max-age": "86400",
  "x-content-type-options": "nosniff",
  "cross-origin-resource-policy": "cross-origin",
};

export function streamResponse(
  status: number,
  headers: Record<string, string>,
  body: BodyInit | null = null,
): Response {
  return new Response(body, { status, headers: { ...BASE_HEADERS, ...headers } });
}

/**
 * Every stream refusal, in the API's error body with its mapped status; `headers` carry what the
 * protocol adds to some (Producer-Epoch on 403, Stream-Closed on 409…). CORS headers included.
 */
export function streamFailure(failure: Failure, headers: Record<string, string> = {}): Response {
  return streamResponse(
    ERROR_STATUS[failure.code],
    { "content-type": "application/json", ...headers },
    JSON.stringify(errorBody(failure.code, failure.message)),
  );
}

/**
 * Which tenant's streams the caller may use: the tenant of an API key, or, only when
 * ALLOW_ANONYMOUS_STREAMS=true, the sandbox tenant for requests without credentials. Run tokens
 * are for a run's own routes and are refused here.
 */
export function streamTenant(env: Env, authorization: string | undefined): Result<string> {
  if (authorization === undefined || authorization.trim() === "") {
    if (env.ALLOW_ANONYMOUS_STREAMS === "true") return ok(ANONYMOUS_STREAM_TENANT);
    return fail("unauthorized", "missing credentials: send Authorization: Bearer <API key>");
  }
  const credential = bearerCredential(authorization);
  if (credential === null) return fail("unauthorized", "use Authorization: Bearer <API key>");
  return apiKeyTenant(env.API_KEYS, credential, "/v1/stream");
}
