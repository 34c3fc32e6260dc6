import { streamStub } from "../objects/stubs.ts";
import { MAX_APPEND_BYTES } from "../streams/content.ts";
import { BASE_HEADERS, streamFailure, streamResponse, streamTenant } from "../streams/http.ts";
import { serveStreamHead, serveStreamRead } from "../streams/read-responses.ts";
import {
  parseAppendHeaders,
  parseCreateHeaders,
  parseForkHeaders,
  parseReadQuery,
  parseStreamPath,
} from "../streams/request.ts";
import type { StreamApi } from "../streams/stream-api.ts";
import { appendResponse, createResponse } from "../streams/write-responses.ts";
import { fail, ok, type Result, STREAM_ROUTE_PREFIX } from "../protocol/index.ts";
import type { Context, MiddlewareHandler } from "hono";
import type { Env } from "../env.ts";
import { apiRouter, headRoute, type RawRoute, rawRoute } from "./api-route.ts";
import { readLimitedBody } from "./body-limit.ts";
import { STREAM_ROUTES } from "./stream-docs.ts";

/**
 * Durable Streams at /v1/stream/{path} (durable-streams PROTOCOL.md): PUT creates, POST appends
 * or closes, GET reads (catch-up, long-poll, SSE), HEAD describes, DELETE removes. One
 * StreamObject per tenant and path does the work (src/objects/stream-object.ts); the HTTP of
 * streams is in src/streams.
 *
 * Mounted before the /v1/* API-key middleware: streams authenticate themselves (streamTenant),
 * because CORS preflights carry no credentials and ALLOW_ANONYMOUS_STREAMS may admit requests
 * without any.
 */
export const streams = apiRouter();

interface Target {
  tenant: string;
  path: string;
  stub: StreamApi;
}

interface StreamEnv {
  Bindings: Env;
  Variables: { stream: Target };
}

/** The stream a request to `pathname` names, in the caller's tenant. */
export function streamTarget(env: Env, pathname: string, authorization: string | undefined): Result<Target> {
  const path = parseStreamPath(pathname.slice(STREAM_ROUTE_PREFIX.length));
  if (!path.ok) return path;
  const tenant = streamTenant(env, authorization);
  if (!tenant.ok) return tenant;
  return ok({ tenant: tenant.value, path: path.value, stub: streamStub(env, tenant.value, path.value) });
}

/** Puts the stream the request names on the context (`c.var.stream`), or refuses with the stream's headers. */
function streamTargeted(): MiddlewareHandler<StreamEnv> {
  return async (c, next) => {
    const stream = streamTarget(c.env, new URL(c.req.url).pathname, c.req.header("authorization"));
    if (!stream.ok) return streamFailure(stream);
    c.set("stream", stream.value);
    await next();
  };
}

/** A documented stream route, served behind `streamTargeted`. */
const targeted = <R extends RawRoute>(route: R) => ({
  ...route,
  access: { ...route.access, middleware: streamTargeted() },
});

rawRoute(streams, STREAM_ROUTES.preflight, () => streamResponse(204, {}));

rawRoute(streams, targeted(STREAM_ROUTES.create), async (c: Context<StreamEnv>) => {
  const headers = parseCreateHeaders(c.req.raw.headers);
  if (!headers.ok) return streamFailure(headers);
  const fork = parseForkHeaders(c.req.raw.headers, STREAM_ROUTE_PREFIX);
  if (!fork.ok) return streamFailure(fork);
  const body = await readLimitedBody(c.req.raw, MAX_APPEND_BYTES);
  if (!body.ok) return streamFailure(body);
  const { tenant, path, stub } = c.var.stream;
  const result = await stub.create({ tenant, path, ...headers.value, body: body.value, fork: fork.value });
  const url = new URL(c.req.url);
  return createResponse(result, url.origin + url.pathname);
});

rawRoute(streams, targeted(STREAM_ROUTES.append), (c: Context<StreamEnv>) => appendToStream(c.req.raw, c.var.stream));

/** POST: an append (or a close), refused here when its headers or body are wrong. */
export async function appendToStream(request: Request, stream: Target): Promise<Response> {
  const headers = parseAppendHeaders(request.headers);
  if (!headers.ok) return streamFailure(headers);
  const body = await readLimitedBody(request, MAX_APPEND_BYTES);
  if (!body.ok) return streamFailure(body);
  if (body.value.byteLength === 0 && !headers.value.close)
    return streamFailure(fail("invalid_request", "an append needs a non-empty body"));
  if (body.value.byteLength > 0 && headers.value.contentType === null)
    return streamFailure(fail("invalid_request", "an append needs a Content-Type"));
  return appendResponse(await stream.stub.append({ ...headers.value, body: body.value }));
}

// Hono routes HEAD to GET handlers; the request keeps its method.
headRoute(streams, STREAM_ROUTES.describe);
rawRoute(streams, targeted(STREAM_ROUTES.read), async (c: Context<StreamEnv>) => {
  const { stub } = c.var.stream;
  if (c.req.method === "HEAD") return serveStreamHead(stub);
  const url = new URL(c.req.url);
  return catchUpRead(c.req.raw, url, stub) ?? serveStreamRead(c.env, stub, c.req.raw, url);
});

/** A catch-up page, answered by the object as HTTP; null for a live read, which loops or waits here. */
export function catchUpRead(request: Request, url: URL, stub: StreamApi): Promise<Response> | null {
  const query = parseReadQuery(url);
  return query.ok && query.value.live === "none" ? stub.fetch(request) : null;
}

rawRoute(streams, targeted(STREAM_ROUTES.remove), async (c: Context<StreamEnv>) => {
  const removed = await c.var.stream.stub.remove();
  return removed.ok ? streamResponse(204, {}) : streamFailure(removed);
});

// Any other method: 405 (after the credential check, like every stream request).
streams.all("/*", streamTargeted(), async (c) => {
  return streamFailure(fail("method_not_allowed", `${c.req.method} is not a stream method`), {
    allow: BASE_HEADERS["access-control-allow-methods"] as string,
  });
});
