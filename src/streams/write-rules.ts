import type { LogState } from "../log/log.ts";
import { encodeOffset, LOG_START, type OffsetRef } from "../log/offsets.ts";
import { judgeProducer, type ProducerState, STREAM_PRODUCER_RULES } from "../log/producers.ts";
import { fail, ok, type Result } from "../protocol/index.ts";
import { DEFAULT_CONTENT_TYPE, mediaType, splitBody } from "./content.ts";
import type { Lineage } from "./fork-tables.ts";
import type { Meta } from "./meta.ts";
import type { AppendRequest, AppendVerdict, CreateRequest } from "./stream-api.ts";

/**
 * The rules writes to a stream are judged by (PROTOCOL §5.1, §5.2), pure: what an append may do
 * to the stream as it stands, and whether a repeated PUT describes the stream it finds. The
 * StreamObject reads the state, asks here, and applies the answer in the same transaction.
 */

/** An append that may go ahead: what to store. */
export interface AppendWrite {
  kind: "write";
  messages: Uint8Array[];
  /** What the producer's row becomes (null: no producer headers). */
  producerState: ProducerState | null;
}

/**
 * Judges an append against a live stream: its configuration, its log's state and the stored
 * state of the request's producer (null: never seen, or no producer). Producer duplicates are
 * recognised first, then closure, content type and body, then Stream-Seq.
 */
export function judgeAppend(
  request: AppendRequest,
  meta: Meta,
  log: LogState,
  stored: ProducerState | null,
): Result<AppendVerdict | AppendWrite> {
  const tail = encodeOffset(log.tail);
  const closeOnly = request.close && request.body.byteLength === 0;
  const producer = request.producer;

  let producerState: ProducerState | null = null;
  if (producer) {
    const by = log.closedBy;
    if (log.closed && by?.producerId === producer.producerId && by.epoch === producer.epoch && by.seq === producer.seq)
      // A retry of the close that closed the stream.
      return ok({ kind: "duplicate", tail, closed: true, epoch: producer.epoch, lastSeq: stored?.lastSeq ?? by.seq });
    const verdict = judgeProducer(stored, producer, STREAM_PRODUCER_RULES);
    switch (verdict.kind) {
      case "duplicate":
        return ok({ kind: "duplicate", tail, closed: log.closed, epoch: producer.epoch, lastSeq: verdict.lastSeq });
      case "stale_epoch":
        return ok({ kind: "stale_epoch", current: verdict.current });
      case "gap":
        return ok({ kind: "gap", expected: verdict.expected, received: verdict.received });
      case "bad_epoch_start":
        return fail("invalid_request", "a new producer epoch must start at Producer-Seq 0");
      case "accepted":
        producerState = verdict.state;
    }
  }

  if (log.closed) {
    if (closeOnly && !producer) return ok({ kind: "appended", tail, closed: true, producer: null, wrote: false });
    return ok({ kind: "stream_closed", tail });
  }

  let messages: Uint8Array[] = [];
  if (!closeOnly) {
    if (request.contentType === null) return fail("invalid_request", "Content-Type is required");
    if (mediaType(request.contentType) !== mediaType(meta.contentType))
      return fail("conflict", `the stream's content type is ${meta.contentType}`);
    const split = splitBody(request.body, meta.contentType, false);
    if (!split.ok) return split;
    messages = split.value;
  }

  if (request.writerSeq !== null && meta.writerSeq !== null && request.writerSeq <= meta.writerSeq)
    return fail("conflict", `Stream-Seq must increase past ${meta.writerSeq}`);
  return ok({ kind: "write", messages, producerState });
}

/** What a written append answers. */
export function appended(request: AppendRequest, write: AppendWrite, tail: string): AppendVerdict {
  const producer = request.producer;
  return {
    kind: "appended",
    tail,
    closed: request.close,
    producer: producer ? { epoch: producer.epoch, seq: producer.seq } : null,
    wrote: write.messages.length > 0,
  };
}

/** Idempotent PUT: does the request describe the stream as it was created? */
export function sameConfig(meta: Meta, lineage: Lineage | null, closed: boolean, request: CreateRequest): boolean {
  const fork = request.fork;
  const contentType = request.contentType ?? (fork ? meta.contentType : DEFAULT_CONTENT_TYPE);
  if (mediaType(contentType) !== mediaType(meta.contentType)) return false;
  const namesExpiry = request.ttlSeconds !== null || request.expiresAt !== null;
  const inherited = !namesExpiry && lineage?.expiryInherited === true;
  if (!inherited && (meta.ttlSeconds !== request.ttlSeconds || meta.expiresAt !== request.expiresAt)) return false;
  if (closed !== request.closed) return false;
  if ((fork?.sourcePath ?? null) !== (lineage?.sourcePath ?? null)) return false;
  // An omitted fork offset meant "the tail then"; a retry that omits it again matches.
  if (fork?.offset && offsetToken(fork.offset) !== lineage?.forkOffset) return false;
  return (fork?.subOffset ?? 0) === (lineage?.subOffset ?? 0);
}

function offsetToken(ref: OffsetRef): string {
  if (ref.kind === "start") return encodeOffset(LOG_START);
  if (ref.kind === "now") return "now";
  return encodeOffset(ref);
}
