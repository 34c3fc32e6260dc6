import fs from "node:fs";

/**
 * Follows journal.times (`<line number> <epoch ms>` per journal line, written by the supervisor
 * before the line itself) in step with the journal: asked for line N, it reads on until N's
 * entry. Lines without one (a journal from before times were kept) have no time.
 */
export class JournalTimes {
  private readonly file: string;
  private offset = 0;
  private partial = "";
  private entries: [number, number][] = [];
  private head = 0;

  constructor(file: string) {
    this.file = file;
  }

  /** Epoch ms of journal line `lineNo`, asked in increasing order; undefined when none was kept. */
  timeOf(lineNo: number): number | undefined {
    for (;;) {
      while (this.head < this.entries.length && (this.entries[this.head] as [number, number])[0] < lineNo) this.head++;
      const next = this.entries[this.head];
      if (next) return next[0] === lineNo ? next[1] : undefined;
      if (!this.fill()) return undefined;
    }
  }

  /** Reads what the file gained; false when it had nothing new. */
  private fill(): boolean {
    let fd: number;
    try {
      fd = fs.openSync(this.file, "r");
    } catch {
      return false;
    }
    let text = "";
    try {
      const chunk = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = fs.readSync(fd, chunk, 0, chunk.length, this.offset);
        if (n <= 0) break;
        this.offset += n;
        text += chunk.toString("latin1", 0, n);
        if (text.length >= 1024 * 1024) break;
      }
    } finally {
      fs.closeSync(fd);
    }
    if (text === "") return false;
    this.entries = this.entries.slice(this.head);
    this.head = 0;
    const lines = (this.partial + text).split("\n");
    this.partial = lines.pop() ?? "";
    for (const line of lines) {
      const [no, ms] = line.split(" ").map(Number);
      if (Number.isSafeInteger(no) && Number.isSafeInteger(ms)) this.entries.push([no as number, ms as number]);
    }
    return true;
  }
}
