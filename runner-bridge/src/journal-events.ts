import type { RunnerEvent } from "../../src/protocol/index.ts";
import { fitEvent } from "./adapters/agui/fit.ts";
import type { Adapter } from "./adapters/types.ts";
import type { Envelope } from "./command-file.ts";
import { JournalReader } from "./journal.ts";
import { JournalTimes } from "./journal-times.ts";
import { redactText } from "./redact.ts";
import type { ExitInfo } from "./sentinel.ts";

/** One journal line as the edge will store it, and the inbox writes the adapter makes in reaction. */
export interface JournalEvent {
  event: RunnerEvent;
  reactions: Envelope[][];
}

export interface JournalEventsOptions {
  /** journal.times: each line's time as the supervisor recorded it, sent as the event's `time`. */
  times?: string;
  /** Secret forms (redact.ts) that must not leave in an event, whatever the journal holds. */
  redact?: readonly string[];
}

/**
 * The journal read through the adapter: line N becomes the event with sourceSeq N, timed when the
 * supervisor got it from the agent. Reading again from byte 0 (after a gap) must reproduce
 * exactly the same events and reactions.
 */
export class JournalEvents {
  private readonly file: string;
  private readonly nonce: string;
  private readonly makeAdapter: () => Adapter;
  private readonly options: JournalEventsOptions;
  private reader: JournalReader;
  private times: JournalTimes | null;
  private current: Adapter;

  constructor(file: string, nonce: string, makeAdapter: () => Adapter, options: JournalEventsOptions = {}) {
    this.file = file;
    this.nonce = nonce;
    this.makeAdapter = makeAdapter;
    this.options = options;
    this.reader = new JournalReader(file, nonce);
    this.times = options.times ? new JournalTimes(options.times) : null;
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
    const forms = this.options.redact ?? [];
    return this.reader.read(max).map((line) => {
      // Redacted before anything cuts the line (the adapter's and fitEvent's size caps), so no
      // part of a secret that straddles a cut can leave; the event is redacted again after, for
      // what an adapter assembles.
      const text = forms.length > 0 ? redactText(line.text, forms) : line.text;
      const result = this.current.onLine(text);
      const event: RunnerEvent = { sourceSeq: line.lineNo, type: result.event.type };
      if (result.event.data !== undefined) event.data = result.event.data;
      const fitted = redactEvent(fitEvent(event, text), forms);
      const time = this.times?.timeOf(line.lineNo);
      if (time !== undefined) fitted.time = new Date(time).toISOString();
      return { event: fitted, reactions: result.reactions ?? [] };
    });
  }

  /**
   * Starts again from byte 0 with a fresh adapter: its state (counters, open requests) is derived
   * from the lines alone, so the same lines give the same events and the same reaction ids.
   */
  reread(): void {
    this.reader = new JournalReader(this.file, this.nonce);
    this.times = this.options.times ? new JournalTimes(this.options.times) : null;
    this.current = this.makeAdapter();
  }
}

/** The event with every string in its type and data redacted (only looked into when one matches). */
function redactEvent(event: RunnerEvent, forms: readonly string[]): RunnerEvent {
  if (forms.length === 0) return event;
  const text = JSON.stringify([event.type, event.data ?? null]);
  if (!forms.some((form) => text.includes(form))) return event;
  const scrubbed: RunnerEvent = { ...event, type: redactText(event.type, forms) };
  if (event.data !== undefined) scrubbed.data = redactValue(event.data, forms);
  return scrubbed;
}

function redactValue(value: unknown, forms: readonly string[]): unknown {
  if (typeof value === "string") return redactText(value, forms);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, forms));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [redactText(key, forms), redactValue(item, forms)]),
    );
  }
  return value;
}
