import type { LogCore } from "./log.ts";
import { encodeOffset, type OffsetRef, parseOffset } from "./offsets.ts";
import type { LogWaiters } from "./waiters.ts";

/**
 * Reads of a log as a Durable Streams stream, and the contract every readable log answers (a
 * generic stream's StreamObject, a run's RunObject): `ReadRequest` in, `ReadResult` out, with
 * `StreamInfo` describing the stream.
 */

/**
 * At most this much is returned by one read of a log, whatever reads it. Bytes are the real
 * bound; the entry cap only stops a page of tiny messages from growing without end. (A cap of
 * 1,000 made a catch-up of 20,000 150-byte events take 20 GETs; 1 MiB and 10,000 took 3. The page
 * is built inside SQLite, so a bigger one costs no JavaScript per entry: 4 MiB takes it in one.)
 */
export const LOG_READ_LIMITS = { maxBytes: 4 * 1024 * 1024, maxEntries: 100_000 };

/** What a readable log is, as HEAD and every read report it. */
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

export interface ReadRequest {
  offset: OffsetRef;
  /** How long to wait for data when the offset is at the tail (0: answer at once). */
  waitMs: number;
}

export type PageRead =
  | {
      kind: "read";
      /** Offset token the read started at (`now` resolved to the tail). */
      start: string;
      next: string;
      /** The entries' bodies: concatenated, or in JSON mode one JSON array of them. */
      body: Uint8Array;
      count: number;
      upToDate: boolean;
      /** The log is closed and this read reached its end. */
      closedAtEnd: boolean;
    }
  | { kind: "bad_offset"; message: string };

/** A page of the log and what the stream is; or why there is none. */
export type ReadResult =
  | (Extract<PageRead, { kind: "read" }> & { info: StreamInfo })
  | Extract<PageRead, { kind: "bad_offset" }>
  | { kind: "not_found" }
  /** Soft-deleted: the stream was deleted or expired while forks of it live. */
  | { kind: "gone" };

/** One bounded read from a client offset, which must name an entry boundary of this log. */
export function readPage(
  log: LogCore,
  offset: OffsetRef,
  json: boolean,
  maxBytes = LOG_READ_LIMITS.maxBytes,
): PageRead {
  const resolved = log.resolve(offset);
  if (resolved.kind === "beyond_tail")
    return { kind: "bad_offset", message: "the offset is past the end of the stream" };
  if (resolved.kind === "unknown") return { kind: "bad_offset", message: "the offset does not belong to this stream" };
  // JSON mode: the messages as one JSON array; bytes: the entries back to back.
  const [separator, around] = json ? JSON_PAGE : BYTES_PAGE;
  const page = log.readJoined(resolved.position, { ...LOG_READ_LIMITS, maxBytes }, separator, around);
  const { closed } = log.mustState();
  return {
    kind: "read",
    start: encodeOffset(resolved.position),
    next: encodeOffset(page.next),
    body: page.body,
    count: page.count,
    upToDate: page.upToDate,
    closedAtEnd: closed && page.upToDate,
  };
}

const JSON_PAGE = [",", ["[", "]"]] as const;
const BYTES_PAGE = ["", ["", ""]] as const;

/** A read that found nothing new in a log that is still open: worth waiting for an append. */
function nothingYet(result: ReadResult): boolean {
  return result.kind === "read" && result.count === 0 && !result.info.closed;
}

/**
 * A read that, finding nothing new at the tail of an open log, waits up to `waitMs` for an
 * append (long-poll, SSE) and reads once more. `read` re-checks whatever may have changed.
 */
export async function readOrWait(
  read: (offset: OffsetRef) => ReadResult,
  offset: OffsetRef,
  waiters: LogWaiters,
  waitMs: number,
): Promise<ReadResult> {
  const first = read(offset);
  if (waitMs <= 0 || !nothingYet(first)) return first;
  await waiters.wait(waitMs);
  // `now` meant the tail when the reader asked, not when it woke: read on from where it started.
  return read((first.kind === "read" ? parseOffset(first.start) : null) ?? offset);
}
