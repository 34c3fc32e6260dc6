import { MAX_BATCH_EVENTS, type RunnerEvent } from "../../src/protocol/index.ts";

/** Keep a frame comfortably under the edge's 1 MiB limit. */
export const MAX_FRAME_PAYLOAD = 900 * 1024;
/** Most events kept in memory (read from the journal, not yet acknowledged). */
export const OUTBOX_WINDOW = 2000;

/**
 * --linger-ms when not given. Measured (docs/BENCHMARKS.md, "bridge linger"): 150 lines a
 * millisecond apart went out in 27 frames with no linger, 8 with 10 ms, 3 with 100 ms; the cost is
 * at most one more 25 ms pump tick before a frame that is not full goes.
 */
export const DEFAULT_LINGER_MS = 10;

/** What a `gap` asks for: resend from memory, or read the journal again from byte 0. */
export type GapRepair = "resend" | "reread";

/**
 * The events between the journal and the edge, with no I/O: those read but not yet acknowledged,
 * how far the edge has acknowledged, and how far the current connection has sent. Events arrive in
 * sourceSeq order; a claim, an ack or a gap from the edge moves the marks.
 */
export class Outbox {
  private readonly window: number;
  private unacked: RunnerEvent[] = [];
  /** When each unacked event was pushed (ms), index for index: how long an unsent one has waited. */
  private pushedAt: number[] = [];
  private ackedUpTo = 0;
  private sentUpTo = 0;

  constructor(window = OUTBOX_WINDOW) {
    this.window = window;
  }

  /** Highest sourceSeq the edge holds, as far as this bridge knows. */
  get acked(): number {
    return this.ackedUpTo;
  }

  /** How many more events fit in memory. */
  room(): number {
    return Math.max(0, this.window - this.unacked.length);
  }

  /** Takes the next event read from the journal; one the edge already holds is dropped. */
  push(event: RunnerEvent, now = 0): void {
    if (event.sourceSeq > this.ackedUpTo) {
      this.unacked.push(event);
      this.pushedAt.push(now);
    }
  }

  /**
   * True while the unsent events would make a frame that is not full and the oldest of them has
   * waited less than `lingerMs`: holding them lets a fast agent's next events share their frame.
   */
  lingering(now: number, lingerMs: number): boolean {
    if (lingerMs <= 0) return false;
    const from = this.unacked.findIndex((e) => e.sourceSeq > this.sentUpTo);
    if (from < 0) return false;
    const unsent = this.unacked.length - from;
    if (unsent >= MAX_BATCH_EVENTS) return false;
    if (now - (this.pushedAt[from] as number) >= lingerMs) return false;
    // A frame that the byte bound would split is full already.
    return batchFrom(this.unacked, from).length === unsent;
  }

  /** A new claim: the edge holds everything up to `ackedSourceSeq`; everything after it goes (again). */
  claimed(ackedSourceSeq: number): void {
    this.ackedUpTo = ackedSourceSeq;
    this.sentUpTo = ackedSourceSeq;
    this.dropAcked();
  }

  acknowledged(highestSourceSeq: number): void {
    if (highestSourceSeq > this.ackedUpTo) this.ackedUpTo = highestSourceSeq;
    this.dropAcked();
  }

  /**
   * The edge expects `expected` next. Sending resumes there; when that event already left memory
   * the outbox empties and the journal must be read again from byte 0 (which reproduces it).
   */
  gap(expected: number): GapRepair {
    const first = this.unacked[0]?.sourceSeq;
    const repair: GapRepair = first === undefined || expected < first ? "reread" : "resend";
    if (repair === "reread") {
      this.unacked = [];
      this.pushedAt = [];
    }
    this.ackedUpTo = Math.min(this.ackedUpTo, expected - 1);
    this.sentUpTo = Math.min(this.sentUpTo, expected - 1);
    return repair;
  }

  /** The next `events` batch not yet sent on this connection, marked sent; null when all went. */
  nextBatch(): RunnerEvent[] | null {
    const from = this.unacked.findIndex((e) => e.sourceSeq > this.sentUpTo);
    if (from < 0) return null;
    const batch = batchFrom(this.unacked, from);
    this.sentUpTo = (batch[batch.length - 1] as RunnerEvent).sourceSeq;
    return batch;
  }

  private dropAcked(): void {
    let i = 0;
    while (i < this.unacked.length && (this.unacked[i] as RunnerEvent).sourceSeq <= this.ackedUpTo) i++;
    if (i > 0) {
      this.unacked.splice(0, i);
      this.pushedAt.splice(0, i);
    }
  }
}

/** The batch starting at `from`: at most 500 events and ~900 KiB, never empty. */
export function batchFrom(events: readonly RunnerEvent[], from: number): RunnerEvent[] {
  const batch: RunnerEvent[] = [];
  let bytes = 0;
  for (let i = from; i < events.length && batch.length < MAX_BATCH_EVENTS; i++) {
    const event = events[i] as RunnerEvent;
    const size = Buffer.byteLength(JSON.stringify(event));
    if (batch.length > 0 && bytes + size > MAX_FRAME_PAYLOAD) break;
    batch.push(event);
    bytes += size;
  }
  return batch;
}
