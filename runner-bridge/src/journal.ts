import fs from "node:fs";
import { type ExitInfo, parseSentinel } from "./sentinel.ts";

export interface JournalLine {
  /** 1-based line number: the event's sourceSeq. */
  lineNo: number;
  text: string;
}

/**
 * Follows journal.ndjson from byte 0. Only complete (newline-terminated) lines are returned, so
 * re-reading the file always yields the same lines with the same numbers. The run's exit sentinel
 * ends the journal; anything after it (a lingering grandchild's output) is ignored.
 */
export class JournalReader {
  readonly file: string;
  private readonly nonce: string;
  private offset = 0;
  private partial: Buffer = Buffer.alloc(0);
  private pending: JournalLine[] = [];
  private nextLineNo = 1;
  private exitInfo: ExitInfo | null = null;
  /** Number of data lines before the sentinel (known once the sentinel has been read). */
  private dataLines: number | null = null;

  constructor(file: string, nonce: string) {
    this.file = file;
    this.nonce = nonce;
  }

  /** The agent's exit, once the sentinel has been read (after every data line was returned). */
  get exit(): ExitInfo | null {
    return this.pending.length === 0 ? this.exitInfo : null;
  }

  /** Data lines in the journal, once the sentinel has been seen. */
  get totalLines(): number | null {
    return this.dataLines;
  }

  /** Highest line number returned so far. */
  get linesReturned(): number {
    return this.nextLineNo - 1 - this.pending.length;
  }

  /** Up to `max` new complete lines (reads more of the file when its buffer is empty). */
  read(max: number): JournalLine[] {
    if (this.pending.length === 0 && this.exitInfo === null) this.fill();
    return this.pending.splice(0, max);
  }

  private fill(): void {
    let fd: number;
    try {
      fd = fs.openSync(this.file, "r");
    } catch {
      return;
    }
    try {
      const chunk = Buffer.alloc(256 * 1024);
      // Bounded per call: at most 4 MiB of lines sit in memory at once.
      for (let i = 0; i < 16 && this.exitInfo === null; i++) {
        const n = fs.readSync(fd, chunk, 0, chunk.length, this.offset);
        if (n <= 0) break;
        this.offset += n;
        this.split(chunk.subarray(0, n));
        if (this.pending.length >= 2000) break;
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  private split(data: Buffer): void {
    let buf = this.partial.length ? Buffer.concat([this.partial, data]) : data;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0) break;
      const text = buf.toString("utf8", start, nl);
      start = nl + 1;
      const exit = parseSentinel(text, this.nonce);
      if (exit) {
        this.exitInfo = exit;
        this.dataLines = this.nextLineNo - 1;
        this.partial = Buffer.alloc(0);
        return;
      }
      this.pending.push({ lineNo: this.nextLineNo++, text });
    }
    buf = buf.subarray(start);
    this.partial = Buffer.from(buf);
  }
}
