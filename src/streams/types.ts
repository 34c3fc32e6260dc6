import type { LogPosition, OffsetRef } from "../log/offsets.ts";
import type { ProducerClaim } from "../log/producers.ts";
import type { PageRead } from "../log/reader.ts";

/** The RPC contract between the /v1/stream routes and StreamObject. */

export interface StreamInfo {
  /** Random per incarnation of the stream: a recreated stream never matches an old ETag. */
  streamId: string;
  contentType: string;
  /** Offset token of the tail. */
  tail: string;
  closed: boolean;
  ttlSeconds: number | null;
  expiresAt: string | null;
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

export type CreateResult =
  | { kind: "created" | "exists"; info: StreamInfo }
  | { kind: "conflict"; message: string }
  | { kind: "invalid"; status: 400 | 413; message: string }
  /** A fork's source does not exist. */
  | { kind: "not_found"; message: string };

export interface AppendRequest {
  /** null when absent (allowed only for close-only requests). */
  contentType: string | null;
  body: Uint8Array;
  close: boolean;
  producer: ProducerClaim | null;
  writerSeq: string | null;
}

export type AppendResult =
  | { kind: "appended"; tail: string; closed: boolean; producer: { epoch: number; seq: number } | null; wrote: boolean }
  | { kind: "duplicate"; tail: string; closed: boolean; epoch: number; lastSeq: number }
  | { kind: "stale_epoch"; current: number }
  | { kind: "bad_epoch_start" }
  | { kind: "gap"; expected: number; received: number }
  | { kind: "stream_closed"; tail: string }
  | { kind: "conflict"; message: string }
  | { kind: "invalid"; status: 400 | 413; message: string }
  | { kind: "not_found" }
  | { kind: "gone" };

export interface ReadRequest {
  offset: OffsetRef;
  /** How long to wait for data when the offset is at the tail (0: answer at once). */
  waitMs: number;
}

/** A page of the log (see readPage) and what the stream is; or why there is none. */
export type ReadResult =
  | (Extract<PageRead, { kind: "read" }> & { info: StreamInfo })
  | Extract<PageRead, { kind: "bad_offset" }>
  | { kind: "not_found" }
  /** Soft-deleted: the stream was deleted or expired while forks of it live. */
  | { kind: "gone" };

export type HeadResult = { kind: "found"; info: StreamInfo } | { kind: "not_found" } | { kind: "gone" };

export type DeleteResult = { kind: "deleted" } | { kind: "not_found" } | { kind: "gone" };

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

export type ForkBeginResult =
  | {
      kind: "ok";
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
  | { kind: "not_found" }
  | { kind: "gone" }
  | { kind: "conflict"; message: string }
  | { kind: "bad_offset"; message: string };

export interface ForkPageRequest {
  forkRef: string;
  streamId: string;
  /** Entries after this seq … */
  after: number;
  /** … up to this one (the fork point). */
  through: number;
}

export type ForkPageResult =
  | { kind: "ok"; entries: { body: Uint8Array; time: number }[]; appends: { first: number; last: number }[] }
  | { kind: "not_found" };
