import type { LogPosition } from "./offsets.ts";
import type { ProducerClaim } from "./producers.ts";

/**
 * How the log core stores its entries: in blocks of consecutive entries, one SQLite row each,
 * keyed by the block's first seq. An append (a runner's frame, a stream POST) becomes one block,
 * or several when it passes a bound below; a block is never rewritten, so appends never share
 * one. (Sharing would save rows stored, not rows written: Cloudflare bills an UPDATE of the last
 * block as one row written, like the INSERT of a new one, and the rewrite grows with the block.)
 *
 * A row holds the entries' bodies back to back, each entry's end relative to the block's start
 * position, their times, and the producer stamps when there are any. A block holds the stamps of
 * one producer at most (its `producer_id`), so a resend's stored entry is found by walking down
 * that producer's blocks (LogCore.entryForProducerSeq).
 */

/**
 * Bounds of one block. Cloudflare's SQLite holds at most 2 MB in a row; a stream entry is at most
 * 1 MiB (src/streams/content.ts) and a runner frame at most 1 MiB, so 1 MiB of bodies (or one
 * entry alone) plus its bookkeeping stays under it. The entry bound keeps a block's JSON of ends
 * and stamps small (a page starting mid-block parses the whole of it): 4,096 entries is about
 * 40 KB of it, at ~150-byte events a block of 600 KB.
 */
export const BLOCK_MAX_BYTES = 1024 * 1024;
export const BLOCK_MAX_ENTRIES = 4096;

export interface BlockEntry {
  body: Uint8Array;
  time: number;
  producer: ProducerClaim | null;
}

/** A block as SELECTed for reading. */
export interface RawBlock extends Record<string, SqlStorageValue> {
  first_seq: number;
  last_seq: number;
  start_pos: number;
  bodies: ArrayBuffer;
  /** JSON array: each entry's end, relative to start_pos. */
  ends: string;
}

export const INSERT_BLOCK = `INSERT INTO log_blocks (first_seq, last_seq, start_pos, end_pos, bodies, ends, times, producer_id, stamps)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Stores `entries` after `tail` as one block or more; returns the new tail. `beforeBlock` is told
 * each block's producer just before the block is stored (the log core settles producer rows then).
 */
export function writeBlocks(
  sql: SqlStorage,
  tail: LogPosition,
  entries: readonly BlockEntry[],
  beforeBlock?: (producerId: string | null) => void,
): LogPosition {
  let { seq, pos } = tail;
  let at = 0;
  while (at < entries.length) {
    const end = blockEnd(entries, at);
    const block = entries.slice(at, end);
    const bodies = concat(block);
    const ends: number[] = [];
    let offset = 0;
    for (const entry of block) {
      offset += entry.body.byteLength;
      ends.push(offset);
    }
    const producerId = block.find((entry) => entry.producer !== null)?.producer?.producerId ?? null;
    beforeBlock?.(producerId);
    sql.exec(
      INSERT_BLOCK,
      seq + 1,
      seq + block.length,
      pos,
      pos + offset,
      bodies,
      JSON.stringify(ends),
      timesJson(block),
      producerId,
      producerId === null
        ? null
        : JSON.stringify(block.map((entry) => (entry.producer ? [entry.producer.epoch, entry.producer.seq] : null))),
    );
    seq += block.length;
    pos += offset;
    at = end;
  }
  return { seq, pos };
}

/** Where the block starting at `start` ends: at a bound, or before a second producer's stamp. */
function blockEnd(entries: readonly BlockEntry[], start: number): number {
  let bytes = 0;
  let producerId: string | null = null;
  let index = start;
  for (; index < entries.length; index++) {
    const entry = entries[index] as BlockEntry;
    if (index > start && (bytes + entry.body.byteLength > BLOCK_MAX_BYTES || index - start >= BLOCK_MAX_ENTRIES)) break;
    const id = entry.producer?.producerId ?? null;
    if (id !== null) {
      if (producerId !== null && id !== producerId) break;
      producerId = id;
    }
    bytes += entry.body.byteLength;
  }
  return index;
}

/** One number when every entry has the same time (a frame, a POST), else one per entry. */
function timesJson(block: readonly BlockEntry[]): string {
  const first = block[0]?.time ?? 0;
  return block.every((entry) => entry.time === first) ? String(first) : JSON.stringify(block.map((e) => e.time));
}

/**
 * The last producer stamp of a block's `stamps` column (`[[epoch, seq], …, null]`), without parsing
 * the whole of it: the last `[` past the outer one opens it. Null when no entry is stamped.
 */
export function lastStamp(stamps: string | null): { epoch: number; seq: number } | null {
  if (stamps === null) return null;
  const at = stamps.lastIndexOf("[");
  if (at <= 0) return null;
  const [epoch, seq] = JSON.parse(stamps.slice(at, stamps.indexOf("]", at) + 1)) as [number, number];
  return { epoch, seq };
}

/** The time of entry `index` of a block, from its `times` column. */
export function timeAt(times: number | number[], index: number): number {
  return typeof times === "number" ? times : (times[index] ?? 0);
}

function concat(block: readonly BlockEntry[]): ArrayBuffer {
  const first = block[0];
  if (block.length === 1 && first) return exactBuffer(first.body);
  let size = 0;
  let contiguous = true;
  for (const entry of block) {
    const body = entry.body;
    if (first && (body.buffer !== first.body.buffer || body.byteOffset !== first.body.byteOffset + size))
      contiguous = false;
    size += body.byteLength;
  }
  // Bodies that are consecutive views of one buffer (LogCore.appendTexts) are taken as one span.
  if (first && contiguous) return exactBuffer(new Uint8Array(first.body.buffer, first.body.byteOffset, size));
  const out = new Uint8Array(size);
  let offset = 0;
  for (const entry of block) {
    out.set(entry.body, offset);
    offset += entry.body.byteLength;
  }
  return out.buffer;
}

/** A copy of exactly the bytes of `view`, as SQLite takes them. */
function exactBuffer(view: Uint8Array): ArrayBuffer {
  if (view.byteOffset === 0 && view.byteLength === view.buffer.byteLength && view.buffer instanceof ArrayBuffer)
    return view.buffer;
  return view.slice().buffer as ArrayBuffer;
}
