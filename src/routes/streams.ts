import { Hono } from "hono";
import type { Env } from "../env.ts";
import type { OffsetRef } from "../log/offsets.ts";
import { parseOffset } from "../log/offsets.ts";
import { STREAM_HEADERS as H, STREAM_ROUTE_PREFIX } from "../protocol/index.ts";
import { concat, isTextType, MAX_APPEND_BYTES } from "../streams/content.ts";
import { responseCursor } from "../streams/cursor.ts";
import { BASE_HEADERS, streamError, streamResponse, streamTenant } from "../streams/http.ts";
import {
  parseAppendHeaders,
  parseCreateHeaders,
  parseForkHeaders,
  parseReadQuery,
  parseStreamPath,
} from "../streams/request.ts";
import { base64, controlEvent, dataEvent } from "../streams/sse.ts";
import { streamStub } from "../objects/stubs.ts";
import type { ReadRequest, ReadResult, StreamInfo } from "../streams/types.ts";
import type { AppEnv } from "./app-env.ts";
import { readLimitedBody } from "./body-limit.ts";

/**
 * Durable Streams at /v1/stream/{path} (durable-streams PROTOCOL.md): PUT creates, POST appends
 * or closes, GET reads (catch-up, long-poll, SSE), HEAD describes, DELETE removes. One
 * StreamObject per tenant and path does the work; this file speaks HTTP.
 *
 * Mounted before the /v1/* API-key middleware: streams authenticate themselves (streamTenant),
 * because CORS preflights carry no credentials and ALLOW_ANONYMOUS_STREAMS may admit requests
 * without any.
 */
export const streams = new Hono<AppEnv>();

const DEFAULT_LONG_POLL_MS = 20_000;
/** An SSE response ends after about a minute so CDNs can collapse reconnecting clients (§8.2). */
const SSE_LIFETIME_MS = 60_000;
/** How long each SSE wait for data lasts before a keep-alive control event. */
const SSE_WAIT_MS = 15_000;

const CATCH_UP_CACHE = "private, max-age=60, stale-while-revalidate=300";

type Stub = DurableObjectStub<import("../objects/stream-object.ts").StreamObject>;

/**
 * The read side of a stream. StreamObject stubs satisfy it; a run log can too (GET/HEAD of
 * /v1/runs/:runId/stream), so both are served by `serveStreamHead` and `serveStreamRead`.
 */
export interface StreamReader {
  read(request: ReadRequest): Promise<ReadResult>;
  head(): Promise<StreamInfo | null>;
}

function longPollMs(env: Env): number {
  const configured = Number(env.STREAM_LONG_POLL_MS);
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_LONG_POLL_MS;
}

async function readBody(request: Request): Promise<Uint8Array | Response> {
  const body = await readLimitedBody(request, MAX_APPEND_BYTES);
  return body.ok ? body.value : streamError(body.code, body.message);
}

function infoHeaders(info: StreamInfo): Record<string, string> {
  const headers: Record<string, string> = { "content-type": info.contentType, [H.nextOffset]: info.tail };
  if (info.closed) headers[H.closed] = "true";
  return headers;
}

streams.all("/*", async (c) => {
  const request = c.req.raw;
  const method = request.method;
  if (method === "OPTIONS") return streamResponse(204, {});

  const url = new URL(request.url);
  const path = parseStreamPath(url.pathname.slice(STREAM_ROUTE_PREFIX.length));
  if (!path.ok) return streamError("invalid_request", path.message);
  const caller = streamTenant(c.env, request.headers.get("authorization") ?? undefined);
  if (caller instanceof Response) return caller;
  const stub: Stub = streamStub(c.env, caller.tenant, path.value);

  switch (method) {
    case "PUT":
      return create(stub, request, url, caller.tenant, path.value);
    case "POST":
      return append(stub, request);
    case "GET":
      return serveStreamRead(c.env, stub, request, url);
    case "HEAD": {
      const result = await stub.describe();
      if (result.kind === "gone") return goneError();
      return headResponse(result.kind === "found" ? result.info : null);
    }
    case "DELETE": {
      const result = await stub.remove();
      if (result.kind === "gone") return goneError();
      return result.kind === "deleted" ? streamResponse(204, {}) : streamError("not_found", "no such stream");
    }
    default:
      return streamError("method_not_allowed", `${method} is not a stream method`, {
        allow: BASE_HEADERS["access-control-allow-methods"] as string,
      });
  }
});

async function create(stub: Stub, request: Request, url: URL, tenant: string, path: string): Promise<Response> {
  const headers = parseCreateHeaders(request.headers);
  if (!headers.ok) return streamError("invalid_request", headers.message);
  const fork = parseForkHeaders(request.headers, STREAM_ROUTE_PREFIX);
  if (!fork.ok) return streamError("invalid_request", fork.message);
  const body = await readBody(request);
  if (body instanceof Response) return body;
  const result = await stub.create({ tenant, path, ...headers.value, body, fork: fork.value });
  switch (result.kind) {
    case "created":
      return streamResponse(201, { ...infoHeaders(result.info), location: url.origin + url.pathname });
    case "exists":
      return streamResponse(200, infoHeaders(result.info));
    case "conflict":
      return streamError("conflict", result.message);
    case "invalid":
      return streamError(result.status === 413 ? "payload_too_large" : "invalid_request", result.message);
    case "not_found":
      return streamError("not_found", result.message);
  }
}

/** A soft-deleted stream: deleted (or expired) while forks of it live. */
function goneError(): Response {
  return streamError("gone", "the stream was deleted; it is kept only for its forks");
}

async function append(stub: Stub, request: Request): Promise<Response> {
  const headers = parseAppendHeaders(request.headers);
  if (!headers.ok) return streamError("invalid_request", headers.message);
  const body = await readBody(request);
  if (body instanceof Response) return body;
  if (body.byteLength === 0 && !headers.value.close)
    return streamError("invalid_request", "an append needs a non-empty body");
  if (body.byteLength > 0 && headers.value.contentType === null)
    return streamError("invalid_request", "an append needs a Content-Type");
  const result = await stub.append({ ...headers.value, body });
  switch (result.kind) {
    case "appended": {
      const out: Record<string, string> = { [H.nextOffset]: result.tail };
      if (result.closed) out[H.closed] = "true";
      if (result.producer) {
        out[H.producerEpoch] = String(result.producer.epoch);
        out[H.producerSeq] = String(result.producer.seq);
      }
      return streamResponse(result.producer && result.wrote ? 200 : 204, out);
    }
    case "duplicate": {
      const out: Record<string, string> = {
        [H.nextOffset]: result.tail,
        [H.producerEpoch]: String(result.epoch),
        [H.producerSeq]: String(result.lastSeq),
      };
      if (result.closed) out[H.closed] = "true";
      return streamResponse(204, out);
    }
    case "stale_epoch":
      return streamError("forbidden", "a newer producer epoch owns this Producer-Id", {
        [H.producerEpoch]: String(result.current),
      });
    case "bad_epoch_start":
      return streamError("invalid_request", "a new producer epoch must start at Producer-Seq 0");
    case "gap":
      return streamError("conflict", `producer sequence gap: expected ${result.expected}`, {
        [H.producerExpectedSeq]: String(result.expected),
        [H.producerReceivedSeq]: String(result.received),
      });
    case "stream_closed":
      return streamError("conflict", "the stream is closed", { [H.closed]: "true", [H.nextOffset]: result.tail });
    case "conflict":
      return streamError("conflict", result.message);
    case "invalid":
      return streamError(result.status === 413 ? "payload_too_large" : "invalid_request", result.message);
    case "not_found":
      return streamError("not_found", "no such stream");
    case "gone":
      return goneError();
  }
}

/** HEAD: metadata, never cached. */
export async function serveStreamHead(reader: StreamReader): Promise<Response> {
  return headResponse(await reader.head());
}

function headResponse(info: StreamInfo | null): Response {
  if (!info) return streamError("not_found", "no such stream");
  const headers: Record<string, string> = {
    ...infoHeaders(info),
    "cache-control": "no-store",
    etag: `"${info.streamId}:-1:${info.tail}${info.closed ? ":c" : ""}"`,
  };
  if (info.ttlSeconds !== null) headers[H.ttl] = String(info.ttlSeconds);
  if (info.expiresAt !== null) headers[H.expiresAt] = info.expiresAt;
  return streamResponse(200, headers);
}

function readFailure(result: Exclude<ReadResult, { kind: "read" }>): Response {
  if (result.kind === "not_found") return streamError("not_found", "no such stream");
  if (result.kind === "gone") return goneError();
  return streamError("invalid_query", result.message);
}

/** GET: catch-up, long-poll or SSE read, per the query. */
export async function serveStreamRead(env: Env, reader: StreamReader, request: Request, url: URL): Promise<Response> {
  const query = parseReadQuery(url);
  if (!query.ok) return streamError("invalid_query", query.message);
  const { live, cursor } = query.value;
  const offset: OffsetRef = query.value.offset ?? { kind: "start" };
  if (live === "sse") return sse(reader, offset, cursor);

  const wait = live === "long-poll" ? longPollMs(env) : 0;
  const result = await reader.read({ offset, waitMs: wait });
  if (result.kind !== "read") return readFailure(result);
  const headers: Record<string, string> = { "content-type": result.info.contentType, [H.nextOffset]: result.next };
  if (result.upToDate) headers[H.upToDate] = "true";
  if (result.closedAtEnd) headers[H.closed] = "true";

  if (live === "long-poll") {
    headers[H.cursor] = responseCursor(cursor);
    if (result.count === 0) {
      // Timed out, or the stream is closed at this offset.
      const empty: Record<string, string> = {
        [H.nextOffset]: result.next,
        [H.upToDate]: "true",
        [H.cursor]: headers[H.cursor] as string,
        "cache-control": "no-store",
      };
      if (result.closedAtEnd) empty[H.closed] = "true";
      return streamResponse(204, empty);
    }
  } else if (offset.kind === "now") {
    headers["cache-control"] = "no-store";
    return streamResponse(200, headers, result.body);
  }

  const start = url.searchParams.get("offset") ?? "-1";
  const etag = `"${result.info.streamId}:${start}:${result.next}${result.closedAtEnd ? ":c" : ""}"`;
  headers.etag = etag;
  // Data behind the tail never changes; a read that reached an open tail may grow, so revalidate.
  headers["cache-control"] = result.upToDate && !result.closedAtEnd ? "private, no-cache" : CATCH_UP_CACHE;
  if (request.headers.get("if-none-match") === etag)
    return streamResponse(304, { etag, "cache-control": headers["cache-control"] });
  return streamResponse(200, headers, result.body);
}

/**
 * SSE: the worker loops over bounded reads of the object, each waiting at the tail, and frames
 * what comes back. Each data event is followed by a control event carrying the next offset.
 */
async function sse(reader: StreamReader, offset: OffsetRef, cursor: string | undefined): Promise<Response> {
  const first = await reader.read({ offset, waitMs: 0 });
  if (first.kind !== "read") return readFailure(first);
  const binary = !isTextType(first.info.contentType);
  const decoder = new TextDecoder();
  const startedAt = Date.now();
  let pending: ReadResult | null = first;
  let next = first.next;
  let cancelled = false;

  const frames = (result: Extract<ReadResult, { kind: "read" }>, announce: boolean): Uint8Array[] => {
    const out: Uint8Array[] = [];
    if (result.count > 0) out.push(dataEvent(binary ? base64(result.body) : decoder.decode(result.body)));
    if (result.count > 0 || announce || result.closedAtEnd) {
      if (result.closedAtEnd) out.push(controlEvent({ streamNextOffset: result.next, streamClosed: true }));
      else {
        const fields = { streamNextOffset: result.next, streamCursor: responseCursor(cursor) };
        out.push(controlEvent(result.upToDate ? { ...fields, upToDate: true } : fields));
      }
    }
    return out;
  };

  const body = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      const announce = pending === first;
      const result: ReadResult =
        pending ??
        (await reader.read({
          offset: parseOffset(next) ?? { kind: "start" },
          waitMs: Math.min(SSE_WAIT_MS, Math.max(0, startedAt + SSE_LIFETIME_MS - Date.now())),
        }));
      pending = null;
      if (cancelled) return;
      if (result.kind !== "read") {
        controller.close();
        return;
      }
      // A read that timed out with nothing new still tells the client it is caught up.
      // One chunk per batch: a data event and its control event reach the client together.
      const batch = frames(result, announce || result.count === 0);
      if (batch.length > 0) controller.enqueue(concat(batch));
      next = result.next;
      if (result.closedAtEnd || Date.now() - startedAt >= SSE_LIFETIME_MS) controller.close();
    },
    cancel: () => {
      cancelled = true;
    },
  });
  const headers: Record<string, string> = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  if (binary) headers[H.sseEncoding] = "base64";
  return streamResponse(200, headers, body);
}
