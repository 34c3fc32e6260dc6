import { utf8Sizes } from "../log/log.ts";
import { fail, ok, type Result } from "../protocol/index.ts";

/** Content types, JSON mode and body splitting for Durable Streams. */

export const DEFAULT_CONTENT_TYPE = "application/octet-stream";
/** Largest stored entry: byte appends are split at this size, JSON messages may not exceed it. */
export const MAX_ENTRY_BYTES = 1024 * 1024;
/** Largest request body accepted by PUT/POST. */
export const MAX_APPEND_BYTES = 16 * 1024 * 1024;

/** The media type alone, lowercased: "Application/JSON; charset=utf-8" → "application/json". */
export function mediaType(contentType: string): string {
  return (contentType.split(";")[0] ?? "").trim().toLowerCase();
}

/** A syntactically plausible `type/subtype`. */
export function isValidContentType(contentType: string): boolean {
  return /^[\w.+-]+\/[\w.+-]+/.test(contentType.trim());
}

export function isJsonType(contentType: string): boolean {
  return mediaType(contentType) === "application/json";
}

/** Streams whose bytes SSE may carry as text; everything else is sent base64-encoded. */
export function isTextType(contentType: string): boolean {
  const media = mediaType(contentType);
  return media.startsWith("text/") || media === "application/json";
}

const encoder = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * JSON mode: validates the body and flattens one level of array, one message per element, each
 * re-serialised compactly. `allowEmpty`: an empty array is a valid PUT body but not a POST body.
 * The messages are encoded together, once, and handed out as views of that one buffer.
 */
function jsonMessages(body: Uint8Array, allowEmpty: boolean): Result<Uint8Array[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8.decode(body));
  } catch {
    return fail("invalid_request", "the body is not valid JSON");
  }
  const values = Array.isArray(parsed) ? parsed : [parsed];
  if (values.length === 0 && !allowEmpty) return fail("invalid_request", "an empty JSON array appends nothing");
  const texts = values.map((value) => JSON.stringify(value));
  const joined = encoder.encode(texts.join(""));
  const messages: Uint8Array[] = [];
  let at = 0;
  for (const size of utf8Sizes(texts, joined.byteLength)) {
    if (size > MAX_ENTRY_BYTES)
      return fail("payload_too_large", `a JSON message is limited to ${MAX_ENTRY_BYTES} bytes`);
    messages.push(joined.subarray(at, at + size));
    at += size;
  }
  return ok(messages);
}

/** Byte mode: the body as entries of at most MAX_ENTRY_BYTES (boundaries carry no meaning). */
function byteMessages(body: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let at = 0; at < body.byteLength; at += MAX_ENTRY_BYTES) {
    parts.push(body.subarray(at, Math.min(at + MAX_ENTRY_BYTES, body.byteLength)));
  }
  return parts;
}

/** A PUT or POST body as entries of a stream of `contentType`. */
export function splitBody(body: Uint8Array, contentType: string, allowEmptyJson: boolean): Result<Uint8Array[]> {
  if (body.byteLength === 0) return ok([]);
  return isJsonType(contentType) ? jsonMessages(body, allowEmptyJson) : ok(byteMessages(body));
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  let size = 0;
  for (const part of parts) size += part.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
