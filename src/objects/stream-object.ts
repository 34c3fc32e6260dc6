import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import { LogCore } from "../log/log.ts";
import { encodeOffset, type LogPosition, type OffsetRef } from "../log/offsets.ts";
import { STREAM_PRODUCER_RULES } from "../log/producers.ts";
import { LOG_SCHEMA } from "../log/schema.ts";
import { readOrWait, readPage } from "../log/reader.ts";
import { LogWaiters } from "../log/waiters.ts";
import { DEFAULT_CONTENT_TYPE, isJsonType, mediaType, renderBody } from "../streams/content.ts";
import { beginFork, forkPage } from "../streams/fork-source.ts";
import { ForkTables } from "../streams/fork-tables.ts";
import { createFork, sameConfig } from "../streams/forking.ts";
import { deadline, insertMeta, type Meta, readMeta, splitBody } from "../streams/meta.ts";
import { streamStub } from "./stubs.ts";
import type {
  AppendRequest,
  AppendResult,
  CreateRequest,
  CreateResult,
  DeleteResult,
  ForkBeginRequest,
  ForkBeginResult,
  ForkPageRequest,
  ForkPageResult,
  HeadResult,
  ReadRequest,
  ReadResult,
  StreamInfo,
} from "../streams/types.ts";
import { STREAM_SCHEMA } from "./stream-schema.ts";

/** A fork whose copy has not finished by then was abandoned by a crash; its reference is released. */
export const FORK_COPY_TIMEOUT_MS = 5 * 60_000;
/** Retry interval for releasing a reference on a source that could not be reached. */
const RELEASE_RETRY_MS = 10_000;

/** Where the stream stands: absent, soft-deleted (gone, kept for its forks) or live. */
type Status = { kind: "absent" } | { kind: "gone"; meta: Meta } | { kind: "live"; meta: Meta };

/**
 * One Durable Streams stream (PROTOCOL.md): its configuration row and a log from the shared log
 * core. Named by tenant and path; the routes in src/routes/streams.ts speak HTTP, this object
 * answers typed RPC calls. Deleting or expiring the stream empties the object; creating it again
 * starts a new incarnation with a new stream id.
 *
 * Forks: a fork copies its source's entries up to the fork point (src/streams/forking.ts), so
 * offsets agree and reads never cross objects. The source counts its live forks; deleting or
 * expiring it while any remain soft-deletes it (410) until the last fork releases its reference.
 */
export class StreamObject extends DurableObject<Env> {
  readonly log: LogCore;
  readonly forks: ForkTables;
  private readonly waiters = new LogWaiters();
  /** The fork creation under way in this object, if any; other PUTs wait for it. */
  private forking: Promise<unknown> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(LOG_SCHEMA);
    ctx.storage.sql.exec(STREAM_SCHEMA);
    this.log = new LogCore(ctx.storage.sql, STREAM_PRODUCER_RULES);
    this.forks = new ForkTables(ctx.storage.sql);
  }

  // ---- RPC ---------------------------------------------------------------------------------

  async create(request: CreateRequest): Promise<CreateResult> {
    while (this.forking) await this.forking.catch(() => undefined);
    let result: CreateResult;
    if (request.fork) {
      const running = createFork(this, request, request.fork);
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

  async append(request: AppendRequest): Promise<AppendResult> {
    const result = this.ctx.storage.transactionSync(() => this.appendNow(request, Date.now()));
    if (result.kind === "appended") this.waiters.notify();
    await this.settle();
    return result;
  }

  async read(request: ReadRequest): Promise<ReadResult> {
    // A stream deleted and created again while a reader waited is another stream to that reader.
    let streamId: string | null = null;
    const result = await readOrWait(
      (offset) => {
        const read = this.readNow(offset, streamId);
        if (read.kind === "read") streamId = read.info.streamId;
        return read;
      },
      request.offset,
      this.waiters,
      request.waitMs,
    );
    return result.kind === "gone" || result.kind === "not_found" ? this.settled(result) : result;
  }

  private readNow(offset: OffsetRef, expectedStreamId: string | null): ReadResult {
    const status = this.status(Date.now());
    if (status.kind === "gone") return { kind: "gone" };
    if (status.kind !== "live" || (expectedStreamId !== null && status.meta.streamId !== expectedStreamId))
      return { kind: "not_found" };
    const { meta } = status;
    const page = readPage(this.log, offset, (bodies) => renderBody(bodies, isJsonType(meta.contentType)));
    if (page.kind !== "read") return page;
    this.touch(meta, Date.now());
    return { ...page, info: this.info(meta) };
  }

  /** Metadata without counting as an access (HEAD does not extend a TTL). */
  async head(): Promise<StreamInfo | null> {
    const result = await this.describe();
    return result.kind === "found" ? result.info : null;
  }

  /** Like `head`, telling a soft-deleted stream from a missing one. */
  async describe(): Promise<HeadResult> {
    const status = this.status(Date.now());
    if (status.kind === "live") return { kind: "found", info: this.info(status.meta) };
    return this.settled({ kind: status.kind === "gone" ? "gone" : "not_found" });
  }

  async remove(): Promise<DeleteResult> {
    const result = this.ctx.storage.transactionSync((): DeleteResult => {
      const now = Date.now();
      const status = this.status(now);
      if (status.kind !== "live") return { kind: status.kind === "gone" ? "gone" : "not_found" };
      this.retire(now);
      return { kind: "deleted" };
    });
    await this.settle(true);
    return result;
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      this.status(now);
      const lineage = this.forks.lineage();
      // A copy that outlived its deadline with no creation running here was cut off by a restart.
      if (lineage?.copying && !this.forking && now - lineage.startedAt >= FORK_COPY_TIMEOUT_MS) this.abandonFork(now);
    });
    await this.settle(true);
  }

  // ---- RPC between a fork and its source ---------------------------------------------------

  /** A fork asks to start: checks, the fork point, the sub-offset slice, and a reference taken. */
  async forkBegin(request: ForkBeginRequest): Promise<ForkBeginResult> {
    const result = this.ctx.storage.transactionSync(() => this.forkBeginNow(request, Date.now()));
    return this.settled(result);
  }

  /** The entries a fork copies, one page at a time. Served while the fork's reference is held. */
  async forkPage(request: ForkPageRequest): Promise<ForkPageResult> {
    const meta = readMeta(this.ctx.storage.sql);
    if (!meta || meta.streamId !== request.streamId || !this.forks.hasRef(request.forkRef))
      return { kind: "not_found" };
    return forkPage(this.log, this.forks, request.after, request.through);
  }

  /** A fork is gone: drop its reference; a soft-deleted stream goes with its last fork. */
  async forkRelease(forkRef: string): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      this.forks.removeRef(forkRef);
      if (this.forks.tombstoned() && this.forks.refCount() === 0) this.drop(Date.now());
    });
    await this.settle(true);
  }

  // ---- steps -------------------------------------------------------------------------------

  private createNow(request: CreateRequest, now: number): CreateResult {
    const status = this.status(now);
    if (status.kind === "gone")
      return { kind: "conflict", message: "the stream was deleted and is kept until its forks are deleted" };
    if (status.kind === "live") {
      if (!sameConfig(this, status.meta, request))
        return { kind: "conflict", message: "the stream exists with a different configuration" };
      return { kind: "exists", info: this.info(status.meta) };
    }
    const lineage = this.forks.lineage();
    if (lineage) this.abandonFork(now);
    const contentType = request.contentType ?? DEFAULT_CONTENT_TYPE;
    const split = splitBody(request.body, contentType, true);
    if (!split.ok) return { kind: "invalid", status: split.status, message: split.message };
    insertMeta(this.ctx.storage.sql, { ...request, contentType }, now);
    this.log.init();
    this.appendEntries(split.messages, now);
    if (request.closed) this.log.close(null);
    return { kind: "created", info: this.info(this.mustMeta()) };
  }

  private appendNow(request: AppendRequest, now: number): AppendResult {
    const status = this.status(now);
    if (status.kind !== "live") return { kind: status.kind === "gone" ? "gone" : "not_found" };
    const meta = status.meta;
    const state = this.log.mustState();
    const tail = encodeOffset(state.tail);
    const closeOnly = request.close && request.body.byteLength === 0;
    const producer = request.producer;

    let accepted = null;
    if (producer) {
      const by = state.closedBy;
      if (
        state.closed &&
        by &&
        by.producerId === producer.producerId &&
        by.epoch === producer.epoch &&
        by.seq === producer.seq
      ) {
        const lastSeq = this.log.producers.get(producer.producerId)?.lastSeq ?? producer.seq;
        return { kind: "duplicate", tail, closed: true, epoch: producer.epoch, lastSeq };
      }
      const verdict = this.log.producers.judge(producer);
      switch (verdict.kind) {
        case "duplicate":
          return { kind: "duplicate", tail, closed: state.closed, epoch: producer.epoch, lastSeq: verdict.lastSeq };
        case "stale_epoch":
          return { kind: "stale_epoch", current: verdict.current };
        case "gap":
          return { kind: "gap", expected: verdict.expected, received: verdict.received };
        case "bad_epoch_start":
          return { kind: "bad_epoch_start" };
        case "accepted":
          accepted = verdict.state;
      }
    }

    if (state.closed) {
      if (closeOnly && !producer) return { kind: "appended", tail, closed: true, producer: null, wrote: false };
      return { kind: "stream_closed", tail };
    }

    let messages: Uint8Array[] = [];
    if (!closeOnly) {
      if (request.contentType === null) return { kind: "invalid", status: 400, message: "Content-Type is required" };
      if (mediaType(request.contentType) !== mediaType(meta.contentType)) {
        return { kind: "conflict", message: `the stream's content type is ${meta.contentType}` };
      }
      const split = splitBody(request.body, meta.contentType, false);
      if (!split.ok) return { kind: "invalid", status: split.status, message: split.message };
      messages = split.messages;
    }

    if (request.writerSeq !== null) {
      if (meta.writerSeq !== null && request.writerSeq <= meta.writerSeq) {
        return { kind: "conflict", message: `Stream-Seq must increase past ${meta.writerSeq}` };
      }
      this.ctx.storage.sql.exec("UPDATE stream_meta SET writer_seq = ? WHERE singleton = 1", request.writerSeq);
    }

    const newTail: LogPosition = this.appendEntries(messages, now, producer);
    if (producer && accepted) this.log.producers.record(producer.producerId, accepted, now);
    if (request.close) this.log.close(producer);
    this.touch(meta, now);
    return {
      kind: "appended",
      tail: encodeOffset(newTail),
      closed: request.close,
      producer: producer ? { epoch: producer.epoch, seq: producer.seq } : null,
      wrote: messages.length > 0,
    };
  }

  private forkBeginNow(request: ForkBeginRequest, now: number): ForkBeginResult {
    const status = this.status(now);
    if (status.kind !== "live") return { kind: status.kind === "gone" ? "gone" : "not_found" };
    return beginFork(this.log, this.forks, status.meta, request, now);
  }

  // ---- helpers (the fork builder in src/streams/forking.ts uses the public ones) -------------

  /** Appends entries as one append, recording its extent when it spans several entries. */
  appendEntries(messages: readonly Uint8Array[], now: number, producer: AppendRequest["producer"] = null): LogPosition {
    const before = this.log.mustState().tail;
    if (messages.length === 0) return before;
    const after = this.log.append(messages, now, producer);
    this.forks.recordAppend(before.seq + 1, after.seq);
    return after;
  }

  get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /** Runs `body` as one SQLite transaction. */
  transaction<T>(body: () => T): T {
    return this.ctx.storage.transactionSync(body);
  }

  sourceStub(tenant: string, path: string): DurableObjectStub<StreamObject> {
    return streamStub(this.env, tenant, path);
  }

  /** Forgets a fork that did not come to be: its copied entries, and its reference on the source. */
  abandonFork(now: number): void {
    this.forks.dropLineage(now);
    this.log.clear();
    this.forks.clear();
  }

  mustMeta(): Meta {
    const meta = readMeta(this.ctx.storage.sql);
    if (!meta) throw new Error("stream row missing");
    return meta;
  }

  status(now: number): Status {
    const meta = readMeta(this.ctx.storage.sql);
    if (!meta) return { kind: "absent" };
    if (this.forks.tombstoned()) return { kind: "gone", meta };
    const due = deadline(meta);
    if (due !== null && now >= due) {
      if (this.retire(now)) return { kind: "gone", meta };
      return { kind: "absent" };
    }
    return { kind: "live", meta };
  }

  /** Deletes or expires the stream: soft-deleted while forks hold references (true), else dropped. */
  private retire(now: number): boolean {
    if (this.forks.refCount() > 0) {
      this.forks.tombstone(now);
      this.waiters.notify();
      return true;
    }
    this.drop(now);
    return false;
  }

  /** Forgets the stream: configuration, entries, producers, lineage. Waiting readers wake. */
  private drop(now: number): void {
    this.forks.dropLineage(now);
    this.ctx.storage.sql.exec("DELETE FROM stream_meta");
    this.log.clear();
    this.forks.clear();
    this.waiters.notify();
  }

  /** Reads and writes restart a sliding TTL. */
  private touch(meta: Meta, now: number): void {
    if (meta.ttlSeconds === null) return;
    this.ctx.storage.sql.exec("UPDATE stream_meta SET touched_at = ? WHERE singleton = 1", now);
  }

  info(meta: Meta): StreamInfo {
    const state = this.log.mustState();
    return {
      streamId: meta.streamId,
      contentType: meta.contentType,
      tail: encodeOffset(state.tail),
      closed: state.closed,
      ttlSeconds: meta.ttlSeconds,
      expiresAt: meta.expiresAt,
    };
  }

  private async settled<T>(value: T): Promise<T> {
    await this.settle();
    return value;
  }

  /**
   * After a change: release references owed to sources (a dropped fork's), and with `schedule`
   * set the alarm for the next durable deadline. Cheap when there is nothing to do.
   */
  async settle(schedule = false): Promise<void> {
    let failed = false;
    for (const release of this.forks.pendingReleases()) {
      try {
        await this.sourceStub(release.tenant, release.sourcePath).forkRelease(release.forkRef);
        this.forks.released(release.forkRef);
      } catch {
        failed = true;
      }
    }
    if (!schedule && !failed) return;
    const now = Date.now();
    const due: number[] = [];
    const meta = readMeta(this.ctx.storage.sql);
    if (meta && !this.forks.tombstoned()) {
      const expiry = deadline(meta);
      if (expiry !== null) due.push(expiry);
    }
    const lineage = this.forks.lineage();
    if (lineage?.copying) due.push(lineage.startedAt + FORK_COPY_TIMEOUT_MS);
    if (failed) due.push(now + RELEASE_RETRY_MS);
    if (due.length > 0) await this.ctx.storage.setAlarm(Math.max(now, Math.min(...due)));
  }
}
