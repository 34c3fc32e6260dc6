import type { RunnerEvent } from "../../src/protocol/index.ts";
import { fitEvent } from "./adapters/agui/fit.ts";
import type { Adapter } from "./adapters/types.ts";
import type { Envelope } from "./command-file.ts";
import { JournalReader } from "./journal.ts";
import type { ExitInfo } from "./sentinel.ts";

/** One journal line as the edge will store it, and the inbox writes the adapter makes in reaction. */
export interface JournalEvent {
  event: RunnerEvent;
  reactions: Envelope[][];
}

/**
 * The journal read through the adapter: line N becomes the event with sourceSeq N. Reading again
 * from byte 0 (after a gap) must reproduce exactly the same events and reactions.
 */
export class JournalEvents {
  private readonly file: string;
  private readonly nonce: string;
  private readonly makeAdapter: () => Adapter;
  private reader: JournalReader;
  private current: Adapter;

  constructor(file: string, nonce: string, makeAdapter: () => Adapter) {
    this.file = file;
    this.nonce = nonce;
    this.makeAdapter = makeAdapter;
    this.reader = new JournalReader(file, nonce);
    this.current = makeAdapter();
  }

  /** The adapter that has seen every line read so far (it plans commands and the outcome). */
  get adapter(): Adapter {
    return this.current;
  }

  /** The agent's exit, once every data line was read. */
  get exit(): ExitInfo | null {
    return this.reader.exit;
  }

  /** Data lines in the journal, once the exit sentinel has been seen. */
  get totalLines(): number | null {
    return this.reader.totalLines;
  }

  /** Highest line number read so far. */
  get linesRead(): number {
    return this.reader.linesReturned;
  }

  /** Up to `max` further lines as events. */
  read(max: number): JournalEvent[] {
    return this.reader.read(max).map((line) => {
      const result = this.current.onLine(line.text);
      const event: RunnerEvent = { sourceSeq: line.lineNo, type: result.event.type };
      if (result.event.data !== undefined) event.data = result.event.data;
      return { event: fitEvent(event, line.text), reactions: result.reactions ?? [] };
    });
  }

  /**
   * Starts again from byte 0 with a fresh adapter: its state (counters, open requests) is derived
   * from the lines alone, so the same lines give the same events and the same reaction ids.
   */
  reread(): void {
    this.reader = new JournalReader(this.file, this.nonce);
    this.current = this.makeAdapter();
  }
}
