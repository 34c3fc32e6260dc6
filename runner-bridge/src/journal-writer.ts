import fs from "node:fs";
import { redactBytes } from "./redact.ts";

/**
 * The supervisor's half of the journal: the agent's stdout arrives in chunks, and the complete
 * lines of each chunk are appended to journal.ndjson with one `write` (the file is opened for
 * append), the secret forms replaced. Before them, their times go to journal.times as
 * `<line number> <epoch ms>`, so a reader that sees line N always finds N's time; a supervisor
 * killed between the two writes leaves times for lines that never appear, never a line with
 * another's time. A chunk's lines share its time: when the supervisor read them.
 */
export class JournalWriter {
  private readonly journalFd: number;
  private readonly timesFd: number;
  private readonly forms: Buffer[];
  /** The line still being written: bytes after the last newline so far. */
  private chunks: Buffer[] = [];
  private lines = 0;

  constructor(journalFd: number, timesFd: number, secretForms: readonly string[]) {
    this.journalFd = journalFd;
    this.timesFd = timesFd;
    this.forms = secretForms.map((form) => Buffer.from(form));
  }

  /** A chunk of the agent's stdout: every line it completes is journaled now. */
  write(chunk: Buffer, now = Date.now()): void {
    const last = chunk.lastIndexOf(0x0a);
    if (last < 0) {
      this.chunks.push(Buffer.from(chunk));
      return;
    }
    this.chunks.push(chunk.subarray(0, last + 1));
    const complete = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    this.chunks = last + 1 < chunk.length ? [Buffer.from(chunk.subarray(last + 1))] : [];
    this.append(redactBytes(complete, this.forms), now);
  }

  /** The agent is gone: a torn last line is journaled as a line of its own. */
  end(now = Date.now()): void {
    if (this.chunks.length === 0) return;
    const torn = Buffer.concat(this.chunks);
    this.chunks = [];
    this.append(Buffer.concat([redactBytes(torn, this.forms), NEWLINE]), now);
  }

  /** Whole lines (ending in a newline): their times first, then the lines. */
  private append(lines: Buffer, now: number): void {
    let times = "";
    for (let nl = lines.indexOf(0x0a); nl >= 0; nl = lines.indexOf(0x0a, nl + 1)) times += `${++this.lines} ${now}\n`;
    writeAll(this.timesFd, Buffer.from(times));
    writeAll(this.journalFd, lines);
  }
}
const NEWLINE = Buffer.from("\n");

function writeAll(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at);
}
