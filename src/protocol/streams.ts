/** Durable Streams protocol names (durable-streams/durable-streams PROTOCOL.md). */
export const STREAM_HEADERS = {
  nextOffset: "Stream-Next-Offset",
  upToDate: "Stream-Up-To-Date",
  cursor: "Stream-Cursor",
  closed: "Stream-Closed",
  ttl: "Stream-TTL",
  expiresAt: "Stream-Expires-At",
  seq: "Stream-Seq",
  sseEncoding: "Stream-SSE-Data-Encoding",
  forkedFrom: "Stream-Forked-From",
  forkOffset: "Stream-Fork-Offset",
  forkSubOffset: "Stream-Fork-Sub-Offset",
  producerId: "Producer-Id",
  producerEpoch: "Producer-Epoch",
  producerSeq: "Producer-Seq",
  producerExpectedSeq: "Producer-Expected-Seq",
  producerReceivedSeq: "Producer-Received-Seq",
} as const;

/** Streams live under this path prefix; the rest of the path names the stream. */
export const STREAM_ROUTE_PREFIX = "/v1/stream/";

/**
 * The tenant anonymous stream requests use when ALLOW_ANONYMOUS_STREAMS=true. It holds a comma,
 * which no tenant of `API_KEYS` can (its pairs are split at commas), so a real tenant named
 * `anonymous` never shares its streams.
 */
export const ANONYMOUS_STREAM_TENANT = ",anonymous";
