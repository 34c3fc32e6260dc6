import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import { encodeOffset, type OffsetRef } from "../log/offsets.ts";
import { type ReadRequest, type ReadResult, readOrWait, readPage, type StreamInfo } from "../log/reader.ts";
import { LogWaiters } from "../log/waiters.ts";
import { type Failure, fail, ok, type Result } from "../protocol/index.ts";
import { DEFAULT_CONTENT_TYPE, isJsonType, splitBody } from "../streams/content.ts";
import { serveStreamRead } from "../streams/read-responses.ts";
import { beginFork, forkPage } from "../streams/fork-source.ts";
import { createFork, type ForkHost } from "../streams/forking.ts";
import {
  type AppendRequest,
  type AppendVerdict,
  type CreateRequest,
  type Created,
  type ForkBeginRequest,
  type ForkPage,
  type ForkPageRequest,
  type ForkStart,
  NO_SUCH_STREAM,
  STREAM_SOFT_DELETED,
  type StreamApi,
} from "../streams/stream-api.ts";
import { FORK_COPY_TIMEOUT_MS, type StreamStatus, StreamStore } from "../streams/stream-store.ts";
import { appended, judgeAppend } from "../streams/write-rules.ts";
import { alarmTimeFor } from "./alarm-schedule.ts";
import { applyMigrations } from "./migrations.ts";
import { STREAM_MIGRATIONS } from "./stream-schema.ts";
import { streamStub } from "./stubs.ts";

/** Retry interval for releasing a reference on a source that could not be reached. */
const RELEASE_RETRY_MS = 10_000;

/**
 * One Durable Streams stream (PROTOCOL.md): its configuration row and a log from the shared log
 * core, stored by StreamStore. Named by tenant and path; the routes in src/routes/streams.ts speak
 * HTTP, this object answers the typed RPC calls of StreamApi. Deleting or expiring the stream
 * empties the object; creating it again starts a new incarnation with a new stream id.
 *
 * Forks: a fork copies its source's entries up to the fork point (src/streams/forking.ts), so
 * offsets agree and reads never cross objects. The source counts its live forks; deleting or
 * expiring it while any remain soft-deletes it (410) until the last fork releases its reference.
 */
export class StreamObject extends DurableObject<Env> implements StreamApi {
  private readonly store: StreamStore;
  private readonly waiters = new LogWaiters();
  /** What fork creation gets; kept off the class so RPC callers cannot reach it. */
  private readonly forkHost: ForkHost;
  /** The fork creation under way in this object, if any; other PUTs wait for it. */
  private forking: Promise<unknown> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    applyMigrations(ctx.storage, STREAM_MIGRATIONS);
    this.store = new StreamStore(ctx.storage.sql, () => this.waiters.notify());
    this.forkHost = {
      transaction: (step) => ctx.storage.transactionSync(() => step(this.store)),
      scheduleAlarm: () => this.settle(true),
      source: (tenant, path) => streamStub(env, tenant, path),
    };
  }

  // ---- RPC (StreamApi) ---------------------------------------------------------------------

  async create(request: CreateRequest): Promise<Result<Created>> {
    while (this.forking) await this.forking.catch(() => undefined);
    let result: Result<Created>;
    if (request.fork) {
      const running = createFork(this.forkHost, request, request.fork);
      this.forking = running;
      try {
        result = await running;
      } finally {
        this.forking = null;
      }
    } else {
      result = this.ctx.storage.transactionSync(() => this.createNow(request, Date.now()));
    }
    await this.settle(true);
    return result;
  }

  async append(request: AppendRequest): Promise<Result<AppendVerdict>> {
    const result = this.ctx.storage.transactionSync(() =>
      this.store.log.remembering(() => this.appendNow(request, Date.now())),
    );
    if (result.ok && result.value.kind === "appended") this.waiters.notify();
    await this.settle();
    return result;
  }

  async read(request: ReadRequest): Promise<ReadResult> {
    // A stream deleted and created again while a reader waited is another stream to that reader.
    let streamId: string | null = null;
    const result = await readOrWait(
      (offset) => {
        const read = this.store.log.remembering(() => this.readNow(offset, streamId));
        if (read.kind === "read") streamId = read.info.streamId;
        return read;
      },
      request.offset,
      this.waiters,
      request.waitMs,
    );
    return result.kind === "gone" || result.kind === "not_found" ? this.settled(result) : result;
  }

  /** A catch-up read as HTTP (StreamApi.fetch): the same answer the worker would build from read(). */
  override async fetch(request: Request): Promise<Response> {
    return serveStreamRead(this.env, this, request, new URL(request.url));
  }

  async describe(): Promise<Result<StreamInfo>> {
    const status = this.store.status(Date.now());
    if (status.kind === "live") return ok(this.store.info(status.meta));
    return this.settled(refusal(status));
  }

  async remove(): Promise<Result<null>> {
    const result = this.ctx.storage.transactionSync((): Result<null> => {
      const now = Date.now();
      const status = this.store.status(now);
      if (status.kind !== "live") return refusal(status);
      this.store.retire(now);
      return ok(null);
    });
    await this.settle(true);
    return result;
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      this.store.status(now);
      const lineage = this.store.forks.lineage();
      // A copy that outlived its deadline with no creation running here was cut off by a restart.
      if (lineage?.copying && !this.forking && now - lineage.startedAt >= FORK_COPY_TIMEOUT_MS)
        this.store.abandonFork(now);
    });
    await this.settle(true);
  }

  // ---- RPC between a fork and its source ---------------------------------------------------

  async forkBegin(request: ForkBeginRequest): Promise<Result<ForkStart>> {
    const result = this.ctx.storage.transactionSync((): Result<ForkStart> => {
      const now = Date.now();
      const status = this.store.status(now);
      if (status.kind === "gone") return fail("conflict", "the source stream was deleted");
      if (status.kind !== "live") return fail("not_found", "the source stream does not exist");
      return beginFork(this.store.log, this.store.forks, status.meta, request, now);
    });
    return this.settled(result);
  }

  async forkPage(request: ForkPageRequest): Promise<Result<ForkPage>> {
    const meta = this.store.meta();
    if (!meta || meta.streamId !== request.streamId || !this.store.forks.hasRef(request.forkRef))
      return fail("not_found", "the source stream went away");
    return ok(forkPage(this.store.log, this.store.forks, request.after, request.through));
  }

  async forkRelease(forkRef: string): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      const forks = this.store.forks;
      forks.removeRef(forkRef);
      if (forks.tombstoned() && forks.refCount() === 0) this.store.drop(Date.now());
    });
    await this.settle(true);
  }

  // ---- steps -------------------------------------------------------------------------------

  private createNow(request: CreateRequest, now: number): Result<Created> {
    const existing = this.store.existing(request, now);
    if (existing) return existing;
    const contentType = request.contentType ?? DEFAULT_CONTENT_TYPE;
    const split = splitBody(request.body, contentType, true);
    if (!split.ok) return split;
    this.store.insertMeta({ ...request, contentType }, now);
    this.store.log.init();
    this.store.appendEntries(split.value, now);
    if (request.closed) this.store.log.close(null);
    return ok({ kind: "created", info: this.store.currentInfo() });
  }

  private appendNow(request: AppendRequest, now: number): Result<AppendVerdict> {
    const status = this.store.status(now);
    if (status.kind !== "live") return refusal(status);
    const { meta } = status;
    const log = this.store.log;
    const producer = request.producer;
    const stored = producer ? log.producers.get(producer.producerId) : null;
    const decision = judgeAppend(request, meta, log.mustState(), stored);
    if (!decision.ok) return decision;
    if (decision.value.kind !== "write") return ok(decision.value);
    const write = decision.value;
    if (request.writerSeq !== null) this.store.setWriterSeq(request.writerSeq);
    const tail = this.store.appendEntries(write.messages, now, producer);
    if (producer && write.producerState) log.producers.record(producer.producerId, write.producerState, now);
    if (request.close) log.close(producer);
    this.store.touch(meta, now);
    return ok(appended(request, write, encodeOffset(tail)));
  }

  private readNow(offset: OffsetRef, expectedStreamId: string | null): ReadResult {
    const status = this.store.status(Date.now());
    if (status.kind === "gone") return { kind: "gone" };
    if (status.kind !== "live" || (expectedStreamId !== null && status.meta.streamId !== expectedStreamId))
      return { kind: "not_found" };
    const { meta } = status;
    const page = readPage(this.store.log, offset, isJsonType(meta.contentType));
    if (page.kind !== "read") return page;
    this.store.touch(meta, Date.now());
    return { ...page, info: this.store.info(meta) };
  }

  private async settled<T>(value: T): Promise<T> {
    await this.settle();
    return value;
  }

  /**
   * After a change: release references owed to sources (a dropped fork's), and with `schedule`
   * set the alarm for the next durable deadline. Cheap when there is nothing to do.
   */
  private async settle(schedule = false): Promise<void> {
    let failed = false;
    for (const release of this.store.forks.pendingReleases()) {
      try {
        await streamStub(this.env, release.tenant, release.sourcePath).forkRelease(release.forkRef);
        this.store.forks.released(release.forkRef);
      } catch {
        failed = true;
      }
    }
    if (!schedule && !failed) return;
    const now = Date.now();
    const due = [this.store.nextDeadline(), failed ? now + RELEASE_RETRY_MS : null].filter((at) => at !== null);
    if (due.length > 0) await this.ctx.storage.setAlarm(alarmTimeFor(Math.max(now, Math.min(...due))));
  }
}

/** A stream that is not live, as a refusal. */
function refusal(status: Exclude<StreamStatus, { kind: "live" }>): Failure {
  return status.kind === "gone" ? STREAM_SOFT_DELETED : NO_SUCH_STREAM;
}
