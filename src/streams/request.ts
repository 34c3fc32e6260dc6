import type { OffsetRef } from "../log/offsets.ts";
import { parseOffset } from "../log/offsets.ts";
import type { ProducerClaim } from "../log/producers.ts";
import { type Failure, fail, ok, type Result, STREAM_HEADERS as H } from "../protocol/index.ts";
import { isValidContentType } from "./content.ts";

/**
 * Parsing of Durable Streams request headers and query parameters. Pure; refusals are 400s:
 * `invalid_request` for the path and headers, `invalid_query` for a read's query.
 */

const bad = (message: string): Failure => fail("invalid_request", message);
const badQuery = (message: string): Failure => fail("invalid_query", message);

/** Non-negative decimal integer without sign, leading zeros, fraction or exponent. */
const CANONICAL_UINT = /^(0|[1-9]\d*)$/;
const UINT = /^\d+$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Stream path after /v1/stream/: kept percent-encoded as sent; no empty, "." or ".." segments. */
export function parseStreamPath(rawPath: string): Result<string> {
  if (rawPath.length === 0) return bad("the stream path is empty");
  if (rawPath.length > 1024) return bad("the stream path is longer than 1024 characters");
  for (const segment of rawPath.split("/")) {
    if (segment === "" || segment === "." || segment === ".." || segment === "%2e" || segment === "%2E%2E") {
      return bad("the stream path has an empty, '.' or '..' segment");
    }
  }
  return ok(rawPath);
}

export interface CreateHeaders {
  contentType: string | null;
  ttlSeconds: number | null;
  expiresAt: string | null;
  expiresAtMs: number | null;
  closed: boolean;
}

export function parseCreateHeaders(headers: Headers): Result<CreateHeaders> {
  const rawType = headers.get("content-type");
  const contentType = rawType !== null && isValidContentType(rawType) ? rawType.trim() : null;
  const ttl = headers.get(H.ttl);
  const expires = headers.get(H.expiresAt);
  if (ttl !== null && expires !== null) return bad("send Stream-TTL or Stream-Expires-At, not both");
  let ttlSeconds: number | null = null;
  if (ttl !== null) {
    if (!CANONICAL_UINT.test(ttl) || !Number.isSafeInteger(Number(ttl)))
      return bad("Stream-TTL must be a non-negative integer of seconds");
    ttlSeconds = Number(ttl);
  }
  let expiresAtMs: number | null = null;
  if (expires !== null) {
    expiresAtMs = RFC3339.test(expires) ? Date.parse(expires) : Number.NaN;
    if (!Number.isFinite(expiresAtMs)) return bad("Stream-Expires-At must be an RFC 3339 timestamp");
  }
  return ok({ contentType, ttlSeconds, expiresAt: expires, expiresAtMs, closed: headers.get(H.closed) === "true" });
}

export interface ForkHeaders {
  sourcePath: string;
  offset: OffsetRef | null;
  subOffset: number;
}

/** Stream-Forked-From (a path such as /v1/stream/x), Stream-Fork-Offset, Stream-Fork-Sub-Offset. */
export function parseForkHeaders(headers: Headers, prefix: string): Result<ForkHeaders | null> {
  const from = headers.get(H.forkedFrom);
  const offset = headers.get(H.forkOffset);
  const sub = headers.get(H.forkSubOffset);
  if (from === null) {
    if (offset !== null || sub !== null)
      return bad("Stream-Fork-Offset and Stream-Fork-Sub-Offset need Stream-Forked-From");
    return ok(null);
  }
  let source = from.trim();
  try {
    if (/^https?:\/\//i.test(source)) source = new URL(source).pathname;
  } catch {
    return bad("Stream-Forked-From must be a stream path");
  }
  if (!source.startsWith(prefix)) return bad(`Stream-Forked-From must be a path under ${prefix}`);
  const path = parseStreamPath(source.slice(prefix.length));
  if (!path.ok) return path;
  let ref: OffsetRef | null = null;
  if (offset !== null) {
    ref = parseOffset(offset);
    if (!ref || ref.kind === "now") return bad("Stream-Fork-Offset must be an offset of the source stream");
  }
  let subOffset = 0;
  if (sub !== null) {
    if (!CANONICAL_UINT.test(sub) || !Number.isSafeInteger(Number(sub)))
      return bad("Stream-Fork-Sub-Offset must be a non-negative integer");
    subOffset = Number(sub);
  }
  return ok({ sourcePath: path.value, offset: ref, subOffset });
}

export interface AppendHeaders {
  contentType: string | null;
  close: boolean;
  producer: ProducerClaim | null;
  writerSeq: string | null;
}

export function parseAppendHeaders(headers: Headers): Result<AppendHeaders> {
  const id = headers.get(H.producerId);
  const epoch = headers.get(H.producerEpoch);
  const seq = headers.get(H.producerSeq);
  let producer: ProducerClaim | null = null;
  if (id !== null || epoch !== null || seq !== null) {
    if (id === null || epoch === null || seq === null)
      return bad("send Producer-Id, Producer-Epoch and Producer-Seq together");
    if (id.trim() === "") return bad("Producer-Id must not be empty");
    if (!UINT.test(epoch) || !Number.isSafeInteger(Number(epoch)))
      return bad("Producer-Epoch must be a non-negative integer");
    if (!UINT.test(seq) || !Number.isSafeInteger(Number(seq)))
      return bad("Producer-Seq must be a non-negative integer");
    producer = { producerId: id, epoch: Number(epoch), seq: Number(seq) };
  }
  const rawType = headers.get("content-type");
  return ok({
    contentType: rawType !== null && rawType.trim() !== "" ? rawType.trim() : null,
    close: headers.get(H.closed) === "true",
    producer,
    writerSeq: headers.get(H.seq),
  });
}

export interface ReadQuery {
  offset: OffsetRef | null;
  live: "none" | "long-poll" | "sse";
  cursor: string | undefined;
}

export function parseReadQuery(url: URL): Result<ReadQuery> {
  const offsets = url.searchParams.getAll("offset");
  if (offsets.length > 1) return badQuery("send one offset parameter");
  let offset: OffsetRef | null = null;
  if (offsets.length === 1) {
    offset = parseOffset(offsets[0] as string);
    if (!offset) return badQuery("offset must be -1, now or an offset this server returned");
  }
  const liveParam = url.searchParams.get("live");
  let live: ReadQuery["live"] = "none";
  if (liveParam === "long-poll" || liveParam === "sse") live = liveParam;
  else if (liveParam !== null && liveParam !== "" && liveParam !== "false")
    return badQuery("live must be long-poll or sse");
  if (live !== "none" && offset === null) return badQuery(`live=${live} needs an offset`);
  return ok({ offset, live, cursor: url.searchParams.get("cursor") ?? undefined });
}
