import type { LogCore, LogEntry } from "../log/log.ts";
import type { LogPosition } from "../log/offsets.ts";
import { fail, ok, type Result } from "../protocol/index.ts";
import { isJsonType, mediaType } from "./content.ts";
import type { ForkTables } from "./fork-tables.ts";
import type { Meta } from "./meta.ts";
import type { ForkBeginRequest, ForkPage, ForkStart } from "./stream-api.ts";

/**
 * The source side of a fork: what a fork copies. A fork copies the source's entries 1..seq of
 * the fork point verbatim, so every offset up to the fork point means the same on both.
 */

/** Most a copy page carries, like a catch-up read. */
const PAGE_LIMITS = { maxBytes: 1024 * 1024, maxEntries: 1000 };

/** A fork asks to start from this live stream: checks, fork point, sub-offset slice, reference. */
export function beginFork(
  log: LogCore,
  forks: ForkTables,
  meta: Meta,
  request: ForkBeginRequest,
  now: number,
): Result<ForkStart> {
  if (request.contentType !== null && mediaType(request.contentType) !== mediaType(meta.contentType))
    return fail("conflict", `the source stream's content type is ${meta.contentType}`);
  const resolved = log.resolve(request.offset ?? { kind: "now" });
  if (resolved.kind !== "ok")
    return fail("invalid_request", "Stream-Fork-Offset is not an offset of the source stream");
  let prefix: Uint8Array[] = [];
  if (request.subOffset > 0) {
    const slice = subOffsetPrefix(log, forks, resolved.position, request.subOffset, isJsonType(meta.contentType));
    if (!slice) return fail("invalid_request", "Stream-Fork-Sub-Offset goes past the append at the fork offset");
    prefix = slice;
  }
  // Taken in the same transaction as the checks; repeating a begin with the same name takes no second one.
  forks.addRef(request.forkRef, request.forkPath, now);
  return ok({
    streamId: meta.streamId,
    contentType: meta.contentType,
    ttlSeconds: meta.ttlSeconds,
    expiresAt: meta.expiresAt,
    expiresAtMs: meta.expiresAtMs,
    point: resolved.position,
    prefix,
  });
}

/**
 * Stream-Fork-Sub-Offset: the first `subOffset` bytes (binary) or messages (JSON) of the append
 * that starts at the fork point. Null when there is no such append or it is shorter.
 */
function subOffsetPrefix(
  log: LogCore,
  forks: ForkTables,
  point: LogPosition,
  subOffset: number,
  json: boolean,
): Uint8Array[] | null {
  const tail = log.mustState().tail;
  if (point.seq >= tail.seq) return null;
  const end = forks.appendEnd(point.seq + 1);
  // Read in bounded pages, and only as far as the prefix needs: `subOffset` messages or bytes.
  const entries: LogEntry[] = [];
  let bytes = 0;
  let at = point;
  while (at.seq < end && (json ? entries.length : bytes) < subOffset) {
    const page = log.read(at, { ...PAGE_LIMITS, maxEntries: Math.min(PAGE_LIMITS.maxEntries, end - at.seq) });
    if (page.entries.length === 0) break;
    entries.push(...page.entries);
    for (const entry of page.entries) bytes += entry.body.byteLength;
    at = page.next;
  }
  if (json) {
    if (subOffset > entries.length) return null;
    return entries.slice(0, subOffset).map((entry) => entry.body);
  }
  const prefix: Uint8Array[] = [];
  let left = subOffset;
  for (const entry of entries) {
    if (left === 0) break;
    const take = Math.min(left, entry.body.byteLength);
    prefix.push(take === entry.body.byteLength ? entry.body : entry.body.slice(0, take));
    left -= take;
  }
  return left === 0 ? prefix : null;
}

/** One page of the entries a fork copies: after `after`, never past `through`. */
export function forkPage(log: LogCore, forks: ForkTables, after: number, through: number): ForkPage {
  if (after >= through) return { entries: [], appends: [] };
  const page = log.read(
    { seq: after, pos: 0 },
    { maxBytes: PAGE_LIMITS.maxBytes, maxEntries: Math.min(PAGE_LIMITS.maxEntries, through - after) },
  );
  const last = page.entries.at(-1)?.seq ?? after;
  return {
    entries: page.entries.map((entry) => ({ body: entry.body, time: entry.time })),
    appends: forks.appendsStarting(after, last, through),
  };
}
