import { encodeOffset } from "../log/offsets.ts";
import { fail, ok, type Result } from "../protocol/index.ts";
import { splitBody } from "./content.ts";
import type { CreateRequest, Created, ForkPage, ForkSpec, ForkStart, StreamApi } from "./stream-api.ts";
import type { StreamStore } from "./stream-store.ts";

/** What creating a fork needs from the fork's StreamObject. */
export interface ForkHost {
  /** Runs `step` as one SQLite transaction over the fork's storage. */
  transaction<T>(step: (store: StreamStore) => T): T;
  /** Arms the alarm for the fork's next durable deadline (the copy's timeout among them). */
  scheduleAlarm(): Promise<void>;
  /** The source stream's object, in the fork's tenant. */
  source(tenant: string, path: string): Pick<StreamApi, "forkBegin" | "forkPage">;
}

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
export async function createFork(host: ForkHost, request: CreateRequest, fork: ForkSpec): Promise<Result<Created>> {
  const started = host.transaction((store) => startLineage(store, request, fork));
  if (typeof started !== "string") return started;
  const forkRef = started;
  await host.scheduleAlarm(); // cleans up after a crash mid-copy

  const source = host.source(request.tenant, fork.sourcePath);
  const giveUp = () => host.transaction((store) => store.abandonFork(Date.now()));
  try {
    const begin = await source.forkBegin({
      forkRef,
      forkPath: request.path,
      offset: fork.offset,
      subOffset: fork.subOffset,
      contentType: request.contentType,
    });
    if (!begin.ok) {
      giveUp();
      return begin;
    }
    const start = begin.value;
    host.transaction((store) => store.log.init());
    let after = 0;
    while (after < start.point.seq) {
      const page = await source.forkPage({ forkRef, streamId: start.streamId, after, through: start.point.seq });
      if (!page.ok || page.value.entries.length === 0) {
        giveUp();
        return fail("not_found", "the source stream went away during the fork");
      }
      const copied = page.value;
      host.transaction((store) => copyPage(store, copied));
      after += copied.entries.length;
    }
    return host.transaction((store) => finish(store, request, start));
  } catch (error) {
    giveUp();
    throw error;
  }
}

/** Step 1: the answer when the path is taken or the request cannot be a fork; else the new reference's name. */
function startLineage(store: StreamStore, request: CreateRequest, fork: ForkSpec): Result<Created> | string {
  const now = Date.now();
  const existing = store.existing(request, now);
  if (existing) return existing;
  if (fork.sourcePath === request.path) return fail("not_found", "the source stream does not exist");
  if (request.contentType !== null) {
    const split = splitBody(request.body, request.contentType, true);
    if (!split.ok) return split;
  }
  const forkRef = crypto.randomUUID();
  store.forks.startLineage({
    tenant: request.tenant,
    sourcePath: fork.sourcePath,
    forkRef,
    subOffset: fork.subOffset,
    startedAt: now,
  });
  return forkRef;
}

/** Appends a page of the source's entries with their original times; offsets come out identical. */
function copyPage(store: StreamStore, page: ForkPage): void {
  let run: Uint8Array[] = [];
  let time = 0;
  for (const entry of page.entries) {
    if (run.length > 0 && entry.time !== time) {
      store.log.append(run, time);
      run = [];
    }
    run.push(entry.body);
    time = entry.time;
  }
  if (run.length > 0) store.log.append(run, time);
  for (const span of page.appends) store.forks.recordAppend(span.first, span.last);
}

function finish(store: StreamStore, request: CreateRequest, start: ForkStart): Result<Created> {
  const now = Date.now();
  const contentType = request.contentType ?? start.contentType;
  const split = splitBody(request.body, contentType, true);
  if (!split.ok) {
    store.abandonFork(now);
    return split;
  }
  // A fork that names no expiry takes the source's; it does not get capped by it otherwise.
  const own = request.ttlSeconds !== null || request.expiresAt !== null;
  store.insertMeta(
    {
      tenant: request.tenant,
      path: request.path,
      contentType,
      ttlSeconds: own ? request.ttlSeconds : start.ttlSeconds,
      expiresAt: own ? request.expiresAt : start.expiresAt,
      expiresAtMs: own ? request.expiresAtMs : start.expiresAtMs,
    },
    now,
  );
  store.appendEntries(start.prefix, now);
  store.appendEntries(split.value, now);
  if (request.closed) store.log.close(null);
  store.forks.finishLineage(encodeOffset(start.point), !own);
  return ok({ kind: "created", info: store.currentInfo() });
}
