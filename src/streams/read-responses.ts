import type { Env } from "../env.ts";
import type { OffsetRef } from "../log/offsets.ts";
import type { StreamInfo } from "../log/reader.ts";
import { type Result, STREAM_HEADERS as H } from "../protocol/index.ts";
import { responseCursor } from "./cursor.ts";
import { streamFailure, streamResponse } from "./http.ts";
import { longPollMs } from "./live-waits.ts";
import { parseReadQuery } from "./request.ts";
import { serveSse } from "./sse.ts";
import { readRefusal, type StreamReader } from "./stream-api.ts";

/**
 * Serving reads of any readable log as a Durable Streams stream: HEAD, and GET as a catch-up,
 * long-poll or SSE read (sse.ts), from a StreamReader: a generic stream's StreamObject, or a
 * run's log (GET/HEAD of /v1/runs/:runId/stream).
 */

const CATCH_UP_CACHE = "private, max-age=60, stale-while-revalidate=300";

export function infoHeaders(info: StreamInfo): Record<string, string> {
  const headers: Record<string, string> = { "content-type": info.contentType, [H.nextOffset]: info.tail };
  if (info.closed) headers[H.closed] = "true";
  return headers;
}

/** HEAD: metadata, never cached. */
export async function serveStreamHead(reader: StreamReader): Promise<Response> {
  const described: Result<StreamInfo> = await reader.describe();
  if (!described.ok) return streamFailure(described);
  const info = described.value;
  const headers: Record<string, string> = {
    ...infoHeaders(info),
    "cache-control": "no-store",
    etag: `"${info.streamId}:-1:${info.tail}${info.closed ? ":c" : ""}"`,
  };
  if (info.ttlSeconds !== null) headers[H.ttl] = String(info.ttlSeconds);
  if (info.expiresAt !== null) headers[H.expiresAt] = info.expiresAt;
  return streamResponse(200, headers);
}

/** GET: catch-up, long-poll or SSE read, per the query. */
export async function serveStreamRead(env: Env, reader: StreamReader, request: Request, url: URL): Promise<Response> {
  const query = parseReadQuery(url);
  if (!query.ok) return streamFailure(query);
  const { live, cursor } = query.value;
  const offset: OffsetRef = query.value.offset ?? { kind: "start" };
  if (live === "sse") return serveSse(reader, offset, cursor);

  const wait = live === "long-poll" ? longPollMs(env) : 0;
  const result = await reader.read({ offset, waitMs: wait });
  if (result.kind !== "read") return streamFailure(readRefusal(result));
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
