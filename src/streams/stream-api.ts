import type { LogPosition, OffsetRef } from "../log/offsets.ts";
import type { ProducerClaim } from "../log/producers.ts";
import type { ReadRequest, ReadResult, StreamInfo } from "../log/reader.ts";
import { type Failure, fail, type Result } from "../protocol/index.ts";

/**
 * StreamObject's RPC API: what the /v1/stream routes call, and what a fork calls on its source.
 * Refusals are Failures; verdicts the protocol answers with its own headers stay tagged unions.
 */
export interface StreamApi {
  /** PUT: creates the stream (or a fork), or finds it already created with the same configuration. */
  create(request: CreateRequest): Promise<Result<Created>>;
  /** POST: appends and/or closes. */
  append(request: AppendRequest): Promise<Result<AppendVerdict>>;
  /** GET: a page from an offset, waiting at the tail when asked to. */
  read(request: ReadRequest): Promise<ReadResult>;
  /**
   * GET of a catch-up read (no `live`), answered whole as HTTP: the page crosses from the object
   * as the response body, one copy fewer than an RPC value (a 3 MB page: about 1 ms).
   */
  fetch(request: Request): Promise<Response>;
  /** HEAD: what the stream is, without counting as an access (HEAD does not extend a TTL). */
  describe(): Promise<Result<StreamInfo>>;
  /** DELETE. */
  remove(): Promise<Result<null>>;
  /** A fork asks its source to start: checks, the fork point, the sub-offset slice, a reference taken. */
  forkBegin(request: ForkBeginRequest): Promise<Result<ForkStart>>;
  /** The entries a fork copies, one page at a time; served while the fork's reference is held. */
  forkPage(request: ForkPageRequest): Promise<Result<ForkPage>>;
  /** A fork is gone: its reference on the source is dropped. */
  forkRelease(forkRef: string): Promise<void>;
}

export interface CreateRequest {
  tenant: string;
  path: string;
  /** null: application/octet-stream. */
  contentType: string | null;
  ttlSeconds: number | null;
  /** As sent (compared verbatim on idempotent PUT) and parsed. */
  expiresAt: string | null;
  expiresAtMs: number | null;
  closed: boolean;
  /** The request body; split into entries by the object once the content type is known. */
  body: Uint8Array;
  /** Stream-Forked-From and friends; null for a plain stream. */
  fork: ForkSpec | null;
}

export interface ForkSpec {
  /** The source's stream path (same tenant). */
  sourcePath: string;
  /** null: the source's tail. */
  offset: OffsetRef | null;
  /** Bytes (binary) or messages (JSON) of the source's next append to take as well; 0: none. */
  subOffset: number;
}

/** A PUT that succeeded: the stream is new, or it existed with the same configuration. */
export interface Created {
  kind: "created" | "exists";
  info: StreamInfo;
}

export interface AppendRequest {
  /** null when absent (allowed only for close-only requests). */
  contentType: string | null;
  body: Uint8Array;
  close: boolean;
  producer: ProducerClaim | null;
  writerSeq: string | null;
}

/** How an append ended, in the protocol's terms: each maps to its own status and headers. */
export type AppendVerdict =
  | { kind: "appended"; tail: string; closed: boolean; producer: { epoch: number; seq: number } | null; wrote: boolean }
  | { kind: "duplicate"; tail: string; closed: boolean; epoch: number; lastSeq: number }
  | { kind: "stale_epoch"; current: number }
  | { kind: "gap"; expected: number; received: number }
  | { kind: "stream_closed"; tail: string };

// ---- between a fork and its source (StreamObject to StreamObject) ------------------------------

export interface ForkBeginRequest {
  /** Names the fork's reference on the source; repeating a begin with it takes no second one. */
  forkRef: string;
  forkPath: string;
  offset: OffsetRef | null;
  subOffset: number;
  /** The fork's requested content type, null to inherit. */
  contentType: string | null;
}

/** What the source tells a fork that may start. */
export interface ForkStart {
  streamId: string;
  contentType: string;
  ttlSeconds: number | null;
  expiresAt: string | null;
  expiresAtMs: number | null;
  /** The fork point: entries 1..seq are copied, so offsets up to it are the source's. */
  point: LogPosition;
  /** The sub-offset slice of the next append, stored as the fork's first own append. */
  prefix: Uint8Array[];
}

export interface ForkPageRequest {
  forkRef: string;
  streamId: string;
  /** Entries after this seq … */
  after: number;
  /** … up to this one (the fork point). */
  through: number;
}

export interface ForkPage {
  entries: { body: Uint8Array; time: number }[];
  appends: { first: number; last: number }[];
}

/** What serving reads needs: a generic stream's StreamObject, or a run's log. */
export type StreamReader = Pick<StreamApi, "read" | "describe">;

// ---- refusals every stream operation may answer ------------------------------------------------

export const NO_SUCH_STREAM: Failure = fail("not_found", "no such stream");
/** Soft-deleted: deleted or expired while forks of it live. */
export const STREAM_SOFT_DELETED: Failure = fail("gone", "the stream was deleted; it is kept only for its forks");

/** A read that found no page, as a refusal. */
export function readRefusal(result: Exclude<ReadResult, { kind: "read" }>): Failure {
  if (result.kind === "not_found") return NO_SUCH_STREAM;
  if (result.kind === "gone") return STREAM_SOFT_DELETED;
  return fail("invalid_query", result.message);
}
