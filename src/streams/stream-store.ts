import { LogCore } from "../log/log.ts";
import { encodeOffset, type LogPosition } from "../log/offsets.ts";
import { type ProducerClaim, STREAM_PRODUCER_RULES } from "../log/producers.ts";
import type { StreamInfo } from "../log/reader.ts";
import { fail, ok, type Result } from "../protocol/index.ts";
import { ForkTables } from "./fork-tables.ts";
import {
  deadline,
  deleteMeta,
  insertMeta,
  type Meta,
  type NewStream,
  readMeta,
  readMetaAndTombstone,
  setWriterSeq,
  touchMeta,
} from "./meta.ts";
import type { CreateRequest, Created } from "./stream-api.ts";
import { sameConfig } from "./write-rules.ts";

/** A fork whose copy has not finished by then was abandoned by a crash; its reference is released. */
export const FORK_COPY_TIMEOUT_MS = 5 * 60_000;

/** Where the stream stands: absent, soft-deleted (gone, kept for its forks) or live. */
export type StreamStatus = { kind: "absent" } | { kind: "gone"; meta: Meta } | { kind: "live"; meta: Meta };

/**
 * Where one stream is stored, in its StreamObject's SQLite (schema: src/objects/stream-schema.ts
 * and src/log/schema.ts): the configuration row (meta.ts), the entries and producers (the log
 * core), and the fork bookkeeping (fork-tables.ts). Synchronous; callers hold the transaction.
 */
export class StreamStore {
  readonly log: LogCore;
  readonly forks: ForkTables;
  private readonly sql: SqlStorage;
  /** Wakes readers waiting at the tail, so they see a stream deleted, soft-deleted or expired. */
  private readonly wake: () => void;

  constructor(sql: SqlStorage, wake: () => void) {
    this.sql = sql;
    this.wake = wake;
    this.log = new LogCore(sql, STREAM_PRODUCER_RULES);
    this.forks = new ForkTables(sql);
  }

  meta(): Meta | null {
    return readMeta(this.sql);
  }

  /** Where the stream stands at `now`; a stream past its expiry is retired on the way. */
  status(now: number): StreamStatus {
    const found = readMetaAndTombstone(this.sql);
    if (!found) return { kind: "absent" };
    const { meta } = found;
    if (found.tombstoned) return { kind: "gone", meta };
    const due = deadline(meta);
    if (due !== null && now >= due) {
      if (this.retire(now)) return { kind: "gone", meta };
      return { kind: "absent" };
    }
    return { kind: "live", meta };
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

  /** The stream as it stands, for a write's answer. */
  currentInfo(): StreamInfo {
    const meta = readMeta(this.sql);
    if (!meta) throw new Error("stream row missing");
    return this.info(meta);
  }

  /**
   * A PUT finding its path taken: the stream as created (same configuration) or a conflict.
   * Null when the path is free; a fork copy left by a restart is forgotten first.
   */
  existing(request: CreateRequest, now: number): Result<Created> | null {
    const status = this.status(now);
    if (status.kind === "gone")
      return fail("conflict", "the stream was deleted and is kept until its forks are deleted");
    if (status.kind === "live") {
      const closed = this.log.mustState().closed;
      if (!sameConfig(status.meta, this.forks.lineage(), closed, request))
        return fail("conflict", "the stream exists with a different configuration");
      return ok({ kind: "exists", info: this.info(status.meta) });
    }
    if (this.forks.lineage()) this.abandonFork(now);
    return null;
  }

  /** Starts a new incarnation: the configuration row (the log is initialised by the caller). */
  insertMeta(stream: NewStream, now: number): void {
    insertMeta(this.sql, stream, now);
  }

  /** Appends entries as one append, recording its extent when it spans several entries. */
  appendEntries(messages: readonly Uint8Array[], now: number, producer: ProducerClaim | null = null): LogPosition {
    const before = this.log.mustState().tail;
    if (messages.length === 0) return before;
    const after = this.log.append(messages, now, producer);
    this.forks.recordAppend(before.seq + 1, after.seq);
    return after;
  }

  /** The last accepted Stream-Seq (writer coordination). */
  setWriterSeq(writerSeq: string): void {
    setWriterSeq(this.sql, writerSeq);
  }

  /** Reads and writes restart a sliding TTL. */
  touch(meta: Meta, now: number): void {
    if (meta.ttlSeconds !== null) touchMeta(this.sql, now);
  }

  /** Forgets a fork that did not come to be: its copied entries, and its reference on the source. */
  abandonFork(now: number): void {
    this.forks.dropLineage(now);
    this.log.clear();
    this.forks.clear();
  }

  /** Deletes or expires the stream: soft-deleted while forks hold references (true), else dropped. */
  retire(now: number): boolean {
    if (this.forks.refCount() > 0) {
      this.forks.tombstone(now);
      this.wake();
      return true;
    }
    this.drop(now);
    return false;
  }

  /** Forgets the stream: configuration, entries, producers, lineage. Waiting readers wake. */
  drop(now: number): void {
    this.forks.dropLineage(now);
    deleteMeta(this.sql);
    this.log.clear();
    this.forks.clear();
    this.wake();
  }

  /** The next durable deadline: the stream's expiry, or the timeout of a fork copy under way. */
  nextDeadline(): number | null {
    const due: number[] = [];
    const found = readMetaAndTombstone(this.sql);
    if (found && !found.tombstoned) {
      const expiry = deadline(found.meta);
      if (expiry !== null) due.push(expiry);
    }
    const lineage = this.forks.lineage();
    if (lineage?.copying) due.push(lineage.startedAt + FORK_COPY_TIMEOUT_MS);
    return due.length > 0 ? Math.min(...due) : null;
  }
}
