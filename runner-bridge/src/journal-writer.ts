import fs from "node:fs";
import { redactBytes } from "./redact.ts";

/**
 * The supervisor's half of the journal: the agent's stdout arrives in chunks, and each complete
 * line is written to journal.ndjson with one `write` (the file is opened for append), the secret
 * forms replaced. Before it, its time goes to journal.times as `<line number> <epoch ms>`, so a
 * reader that sees line N always finds N's time; a supervisor killed between the two leaves a
 * time for a line that never appears, never a line with another's time.
 */
export class JournalWriter {
  private readonly journalFd: number;
  private readonly timesFd: number;
  private readonly forms: Buffer[];
  private chunks: Buffer[] = [];
  private lines = 0;

  constructor(journalFd: number, timesFd: number, secretForms: readonly string[]) {
    this.journalFd = journalFd;
    this.timesFd = timesFd;
    this.forms = secretForms.map((form) => Buffer.from(form));
  }

  /** A chunk of the agent's stdout: every line it completes is journaled now. */
  write(chunk: Buffer, now = Date.now()): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      this.chunks.push(chunk.subarray(start, nl));
      this.line(now);
      start = nl + 1;
    }
    if (start < chunk.length) this.chunks.push(Buffer.from(chunk.subarray(start)));
  }

  /** The agent is gone: a torn last line is journaled as a line of its own. */
  end(now = Date.now()): void {
    if (this.chunks.length > 0) this.line(now);
  }

  private line(now: number): void {
    const text = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    this.chunks = [];
    this.lines += 1;
    writeAll(this.timesFd, Buffer.from(`${this.lines} ${now}\n`));
    writeAll(this.journalFd, Buffer.concat([redactBytes(text, this.forms), NEWLINE]));
  }
}
const NEWLINE = Buffer.from("\n");

function writeAll(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at);
}
