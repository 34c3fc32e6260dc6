import { encodeOffset, LOG_START, type OffsetRef } from "../log/offsets.ts";
import type { StreamObject } from "../objects/stream-object.ts";
import { DEFAULT_CONTENT_TYPE, mediaType } from "./content.ts";
import { insertMeta, type Meta, splitBody } from "./meta.ts";
import type { CreateRequest, CreateResult, ForkBeginResult, ForkPageResult, ForkSpec } from "./types.ts";

/**
 * Creating a fork, on the fork's object. Steps, each its own transaction:
 *  1. record the lineage (copying) with a fresh reference name, before the source is asked, so a
 *     crash at any later point leaves a reference to release (the alarm does, after a timeout);
 *  2. the source checks the request, resolves the fork point and takes the reference;
 *  3. copy the source's entries up to the fork point, page by page (the stream does not exist
 *     for clients yet: no stream_meta row);
 *  4. create the stream: configuration, sub-offset slice, the PUT body, closure.
 * Any failure after 1 forgets the copy and queues the reference's release.
 */
export async function createFork(stream: StreamObject, request: CreateRequest, fork: ForkSpec): Promise<CreateResult> {
  const early = stream.transaction((): CreateResult | null => {
    const now = Date.now();
    const status = stream.status(now);
    if (status.kind === "gone")
      return { kind: "conflict", message: "the stream was deleted and is kept until its forks are deleted" };
    if (status.kind === "live") {
      if (!sameConfig(stream, status.meta, request))
        return { kind: "conflict", message: "the stream exists with a different configuration" };
      return { kind: "exists", info: stream.info(status.meta) };
    }
    // A copy left by a restart (nothing runs here now: creations wait for each other).
    if (stream.forks.lineage()) stream.abandonFork(now);
    if (fork.sourcePath === request.path) return { kind: "not_found", message: "the source stream does not exist" };
    if (request.contentType !== null) {
      const split = splitBody(request.body, request.contentType, true);
      if (!split.ok) return { kind: "invalid", status: split.status, message: split.message };
    }
    stream.forks.startLineage({
      tenant: request.tenant,
      sourcePath: fork.sourcePath,
      forkRef: crypto.randomUUID(),
      subOffset: fork.subOffset,
      startedAt: now,
    });
    return null;
  });
  if (early) return early;
  await stream.settle(true); // arms the alarm that cleans up after a crash mid-copy

  const forkRef = stream.forks.lineage()?.forkRef as string;
  const source = stream.sourceStub(request.tenant, fork.sourcePath);
  const giveUp = () => stream.transaction(() => stream.abandonFork(Date.now()));
  try {
    const begin = await source.forkBegin({
      forkRef,
      forkPath: request.path,
      offset: fork.offset,
      subOffset: fork.subOffset,
      contentType: request.contentType,
    });
    if (begin.kind !== "ok") {
      giveUp();
      return refusal(begin);
    }
    stream.transaction(() => stream.log.init());
    let after = 0;
    while (after < begin.point.seq) {
      const page = await source.forkPage({ forkRef, streamId: begin.streamId, after, through: begin.point.seq });
      if (page.kind !== "ok" || page.entries.length === 0) {
        giveUp();
        return { kind: "not_found", message: "the source stream went away during the fork" };
      }
      stream.transaction(() => copyPage(stream, page));
      after += page.entries.length;
    }
    return stream.transaction(() => finish(stream, request, begin));
  } catch (error) {
    giveUp();
    throw error;
  }
}

function refusal(begin: Exclude<ForkBeginResult, { kind: "ok" }>): CreateResult {
  switch (begin.kind) {
    case "not_found":
      return { kind: "not_found", message: "the source stream does not exist" };
    case "gone":
      return { kind: "conflict", message: "the source stream was deleted" };
    case "conflict":
      return { kind: "conflict", message: begin.message };
    case "bad_offset":
      return { kind: "invalid", status: 400, message: begin.message };
  }
}

/** Appends a page of the source's entries with their original times; offsets come out identical. */
function copyPage(stream: StreamObject, page: Extract<ForkPageResult, { kind: "ok" }>): void {
  let run: Uint8Array[] = [];
  let time = 0;
  for (const entry of page.entries) {
    if (run.length > 0 && entry.time !== time) {
      stream.log.append(run, time);
      run = [];
    }
    run.push(entry.body);
    time = entry.time;
  }
  if (run.length > 0) stream.log.append(run, time);
  for (const span of page.appends) stream.forks.recordAppend(span.first, span.last);
}

function finish(
  stream: StreamObject,
  request: CreateRequest,
  begin: Extract<ForkBeginResult, { kind: "ok" }>,
): CreateResult {
  const now = Date.now();
  const contentType = request.contentType ?? begin.contentType;
  const split = splitBody(request.body, contentType, true);
  if (!split.ok) {
    stream.abandonFork(now);
    return { kind: "invalid", status: split.status, message: split.message };
  }
  // A fork that names no expiry takes the source's; it does not get capped by it otherwise.
  const own = request.ttlSeconds !== null || request.expiresAt !== null;
  insertMeta(
    stream.sql,
    {
      tenant: request.tenant,
      path: request.path,
      contentType,
      ttlSeconds: own ? request.ttlSeconds : begin.ttlSeconds,
      expiresAt: own ? request.expiresAt : begin.expiresAt,
      expiresAtMs: own ? request.expiresAtMs : begin.expiresAtMs,
    },
    now,
  );
  stream.appendEntries(begin.prefix, now);
  stream.appendEntries(split.messages, now);
  if (request.closed) stream.log.close(null);
  stream.forks.finishLineage(encodeOffset(begin.point), !own);
  return { kind: "created", info: stream.info(stream.mustMeta()) };
}

function offsetToken(ref: OffsetRef): string {
  if (ref.kind === "start") return encodeOffset(LOG_START);
  if (ref.kind === "now") return "now";
  return encodeOffset(ref);
}

/** Idempotent PUT: does the request describe the stream as it was created? */
export function sameConfig(stream: StreamObject, meta: Meta, request: CreateRequest): boolean {
  const lineage = stream.forks.lineage();
  const fork = request.fork;
  const contentType = request.contentType ?? (fork ? meta.contentType : DEFAULT_CONTENT_TYPE);
  if (mediaType(contentType) !== mediaType(meta.contentType)) return false;
  const namesExpiry = request.ttlSeconds !== null || request.expiresAt !== null;
  const inherited = !namesExpiry && lineage?.expiryInherited === true;
  if (!inherited && (meta.ttlSeconds !== request.ttlSeconds || meta.expiresAt !== request.expiresAt)) return false;
  if (stream.log.mustState().closed !== request.closed) return false;
  if ((fork?.sourcePath ?? null) !== (lineage?.sourcePath ?? null)) return false;
  // An omitted fork offset meant "the tail then"; a retry that omits it again matches.
  if (fork?.offset && offsetToken(fork.offset) !== lineage?.forkOffset) return false;
  return (fork?.subOffset ?? 0) === (lineage?.subOffset ?? 0);
}
