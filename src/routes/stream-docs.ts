import { z } from "zod";
import { RunEvent, RunParams, STREAM_HEADERS as H } from "../protocol/index.ts";
import { RUN_READER_IN_BROWSER } from "./access.ts";
import type { RawRoute } from "./api-route.ts";

// The Durable Streams routes as the OpenAPI document shows them: methods, headers, statuses.
// Their bodies are bytes in the stream's content type, so only the run stream's JSON is a schema.
// The protocol itself: docs/STREAMS.md and durable-streams PROTOCOL.md.

const header = (description: string) => z.string().optional().describe(description);

const StreamPath = z.object({
  path: z.string().describe("The stream's path: one or more segments, kept percent-encoded as sent"),
});

const ReadQuery = z.object({
  offset: z
    .string()
    .optional()
    .describe("`-1` (the start, the default), `now` (the tail) or an offset this server returned"),
  live: z.enum(["long-poll", "sse"]).optional().describe("Wait for data (long-poll) or stream it (Server-Sent Events)"),
  cursor: z.string().optional().describe("The `Stream-Cursor` of the previous live read (CDN collapsing)"),
});

const ReadHeaders = z.object({
  "If-None-Match": header("An ETag of an earlier read: 304 when nothing changed"),
});

const offsetHeaders = z.object({
  [H.nextOffset]: header("Where the next read starts"),
  [H.upToDate]: header("`true` when the read reached the tail"),
  [H.closed]: header("`true` once the stream is closed and fully read"),
  [H.cursor]: header("Live reads: echo back as `cursor`"),
  ETag: header("For `If-None-Match`"),
});

const describeHeaders = z.object({
  "Content-Type": header("The stream's content type"),
  [H.nextOffset]: header("The tail"),
  [H.closed]: header("`true` once closed"),
  [H.ttl]: header("Sliding time-to-live in seconds, when set"),
  [H.expiresAt]: header("Absolute expiry (RFC 3339), when set"),
});

const anyBytes = { "*/*": { schema: {} } };
const sse = { "text/event-stream": { schema: { type: "string" as const } } };

const tags = ["durable streams"];
const streamRoute = {
  tags,
  honoPath: "/*",
  access: { security: [{ apiKey: [] }], refusals: ["invalid_request", "unauthorized", "forbidden"] },
} satisfies Partial<RawRoute>;
const path = "/{path}";
const params = { params: StreamPath };

/** `/v1/stream/{path}`: generic Durable Streams, owned by the API key's tenant. */
export const STREAM_ROUTES = {
  create: {
    ...streamRoute,
    method: "put",
    path,
    summary: "Create a stream (idempotent), or a fork of one",
    request: {
      ...params,
      headers: z.object({
        "Content-Type": header(
          "The stream's content type (default application/octet-stream); application/json is JSON mode",
        ),
        [H.ttl]: header("Sliding time-to-live in seconds"),
        [H.expiresAt]: header("Absolute expiry, RFC 3339 (not with Stream-TTL)"),
        [H.closed]: header("`true` creates it closed"),
        [H.forkedFrom]: header("Fork this stream (a /v1/stream/ path) instead of starting empty"),
        [H.forkOffset]: header("Fork up to this offset of the source (default its tail)"),
        [H.forkSubOffset]: header("Also take this many bytes or messages of the source's next append"),
      }),
      body: { description: "Optional first content", content: anyBytes, required: false },
    },
    responses: {
      201: { description: "Created (Location names it)", headers: describeHeaders },
      200: { description: "It already existed with this configuration", headers: describeHeaders },
    },
    refusals: ["not_found", "conflict", "payload_too_large"],
  },
  append: {
    ...streamRoute,
    method: "post",
    path,
    summary: "Append to a stream, or close it",
    request: {
      ...params,
      headers: z.object({
        "Content-Type": header("Must match the stream's"),
        [H.closed]: header("`true` appends (if any body) and closes"),
        [H.seq]: header("Writer coordination: must increase, compared byte-wise"),
        [H.producerId]: header("Idempotent producer: with Producer-Epoch and Producer-Seq"),
        [H.producerEpoch]: header("Producer epoch"),
        [H.producerSeq]: header("Producer sequence number"),
      }),
      body: {
        description: "The bytes to append; in JSON mode an array appends one message per element",
        content: anyBytes,
      },
    },
    responses: {
      204: { description: "Appended (or a producer duplicate)", headers: offsetHeaders },
      200: { description: "A producer's new write", headers: offsetHeaders },
    },
    refusals: ["not_found", "gone", "conflict", "payload_too_large"],
  },
  read: {
    ...streamRoute,
    method: "get",
    path,
    summary: "Read a stream: catch-up, long-poll or SSE",
    request: { ...params, query: ReadQuery, headers: ReadHeaders },
    responses: {
      200: {
        description: "The bytes from `offset`, in the stream's content type (JSON mode: one array)",
        headers: offsetHeaders,
        content: { ...anyBytes, ...sse },
      },
      204: { description: "Long-poll: nothing arrived in time, or the stream is closed here", headers: offsetHeaders },
      304: { description: "Not modified since the ETag" },
    },
    refusals: ["invalid_query", "not_found", "gone"],
  },
  describe: {
    ...streamRoute,
    method: "head",
    path,
    summary: "Describe a stream",
    request: params,
    responses: { 200: { description: "The stream's metadata, in headers", headers: describeHeaders } },
    refusals: ["not_found", "gone"],
  },
  remove: {
    ...streamRoute,
    method: "delete",
    path,
    summary: "Delete a stream (soft-deleted while forks of it live)",
    request: params,
    responses: { 204: { description: "Deleted" } },
    refusals: ["not_found", "gone"],
  },
  preflight: {
    ...streamRoute,
    access: { security: [], refusals: [] },
    method: "options",
    path,
    summary: "CORS preflight (no credentials needed)",
    request: params,
    responses: { 204: { description: "The CORS headers" } },
    refusals: [],
  },
} satisfies Record<string, RawRoute>;

/** `/v1/runs/{runId}/stream`: a run's log as a read-only JSON-mode stream, one message per event. */
export const RUN_STREAM_ROUTES = {
  read: {
    method: "get",
    path: "/{runId}/stream",
    tags,
    summary: "A run's log as a Durable Streams stream",
    description:
      "One message per event, byte for byte what a WebSocket viewer receives; closed once the run is terminal. Any other method than GET and HEAD is 405.",
    access: RUN_READER_IN_BROWSER,
    request: { params: RunParams, query: ReadQuery, headers: ReadHeaders },
    responses: {
      200: {
        description: "Events from `offset`",
        headers: offsetHeaders,
        content: { "application/json": { schema: z.array(RunEvent) }, ...sse },
      },
      204: { description: "Long-poll: nothing arrived in time, or the run ended here", headers: offsetHeaders },
      304: { description: "Not modified since the ETag" },
    },
    refusals: ["not_found", "gone"],
  },
  describe: {
    method: "head",
    path: "/{runId}/stream",
    tags,
    summary: "Describe a run's stream",
    access: RUN_READER_IN_BROWSER,
    request: { params: RunParams },
    responses: { 200: { description: "The stream's metadata, in headers", headers: describeHeaders } },
    refusals: ["not_found", "gone"],
  },
} satisfies Record<string, RawRoute>;
