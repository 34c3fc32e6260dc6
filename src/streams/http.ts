import { tenantForKey } from "../auth/api-keys.ts";
import { looksLikeToken } from "../auth/tokens.ts";
import type { Env } from "../env.ts";
import {
  ANONYMOUS_STREAM_TENANT,
  ERROR_STATUS,
  type ErrorCode,
  errorBody,
  STREAM_HEADERS as H,
} from "../protocol/index.ts";

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

export function streamError(
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
  status?: number,
): Response {
  return streamResponse(
    status ?? ERROR_STATUS[code],
    { "content-type": "application/json", ...headers },
    JSON.stringify(errorBody(code, message)),
  );
}

/**
 * Which tenant's streams the caller may use: the tenant of an API key, or, only when
 * ALLOW_ANONYMOUS_STREAMS=true, the sandbox tenant for requests without credentials. Run tokens
 * are for a run's own routes and are refused here.
 */
export function streamTenant(env: Env, authorization: string | undefined): { tenant: string } | Response {
  if (authorization === undefined || authorization.trim() === "") {
    if (env.ALLOW_ANONYMOUS_STREAMS === "true") return { tenant: ANONYMOUS_STREAM_TENANT };
    return streamError("unauthorized", "missing credentials: send Authorization: Bearer <API key>");
  }
  if (!authorization.startsWith("Bearer ")) return streamError("unauthorized", "use Authorization: Bearer <API key>");
  const credential = authorization.slice("Bearer ".length).trim();
  if (looksLikeToken(credential)) return streamError("forbidden", "run tokens cannot use /v1/stream; send an API key");
  const tenant = tenantForKey(env.API_KEYS, credential);
  if (!tenant) return streamError("unauthorized", "unknown API key");
  return { tenant };
}
