/**
 * How `watch` shows a run: NDJSON events (--json), plain transcript lines (not a TTY), or the
 * transcript with a live status line under it (a TTY: spinner, status, elapsed time, events).
 */
import { stripVTControlCharacters } from "node:util";
import { ControlEventType, type RunEvent, type RunStatus } from "../../src/protocol/index.ts";
import { clip, duration, type Paint } from "./format.ts";
import { terminalJson } from "./safe-text.ts";
import { Transcript } from "./transcript.ts";

export interface View {
  event(event: RunEvent): void;
  status(status: RunStatus): void;
  /** The connection dropped (reason) or came back (null). */
  connection(lost: string | null, afterSeq: number): void;
  /** The run ended with this status, or the watch stopped early (null). */
  finish(status: RunStatus | null): void;
}

export interface ViewOptions {
  runId: string;
  createdAt: string;
  finishedAt: string | null;
  status: RunStatus;
  /** The seq the watch starts after. */
  after: number;
  paint: Paint;
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
}

export function jsonView(o: ViewOptions): View {
  let lost = false;
  return {
    event: (event) => o.out.write(`${terminalJson(event)}\n`),
    status: () => {},
    connection: (reason, after) => {
      if (reason !== null && !lost)
        o.err.write(`agent-run: connection lost (${reason}); reconnecting after seq ${after}\n`);
      if (reason === null && lost) o.err.write(`agent-run: reconnected; resuming after seq ${after}\n`);
      lost = reason !== null;
    },
    finish: () => {},
  };
}

export function plainView(o: ViewOptions): View {
  const transcript = new Transcript(o.runId, o.paint);
  const notices = jsonView(o);
  return {
    event: (event) => o.out.write(transcript.render(event)),
    status: () => {},
    // Notices go to stderr; stdout stays the transcript, the same as if nothing had dropped.
    connection: notices.connection,
    finish: () => o.out.write(transcript.close()),
  };
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const TICK_MS = 100;

const events = (n: number) => `${n} event${n === 1 ? "" : "s"}`;

/** Visible characters of a line (one column each; wide characters are rare in a transcript). */
function width(line: string): number {
  return [...stripVTControlCharacters(line)].length;
}

/** Terminal rows a line occupies (0 for an empty line). */
function rows(line: string, columns: number): number {
  return Math.ceil(width(line) / columns);
}

export function ttyView(o: ViewOptions): View {
  const transcript = new Transcript(o.runId, o.paint);
  const p = o.paint;
  const started = Date.parse(o.createdAt);
  let ended = o.finishedAt === null ? null : Date.parse(o.finishedAt);
  const elapsed = () => duration((ended ?? Date.now()) - started);
  let status = o.status;
  let lastSeq = o.after;
  let lost: string | null = null;
  let frame = 0;
  /** The streaming line not finished yet; it is redrawn above the status line. */
  let partial = "";
  /** Rows drawn below the last finished line: the partial's, then the status line's. */
  let drawn = 0;
  const columns = () => Math.max(20, o.out.columns || 80);

  const statusLine = () => {
    const parts = [o.runId, status, elapsed(), events(lastSeq)];
    const pending = [...transcript.pendingApprovals];
    if (lost) parts.push(`reconnecting (${lost})`);
    else if (pending.length > 0) parts.push(`awaiting approval: agent-run approve ${o.runId} ${pending[0]}`);
    else if (transcript.activeTool) parts.push(`calling ${transcript.activeTool}`);
    return `${p.cyan(SPINNER[frame % SPINNER.length] as string)} ${p.dim(clip(parts.join(" · "), columns() - 3))}`;
  };
  const erase = () => {
    if (drawn === 0) return;
    let seq = "\r\x1b[2K";
    for (let i = 1; i < drawn; i++) seq += "\x1b[1A\x1b[2K";
    o.out.write(seq);
    drawn = 0;
  };
  /** The status line, below the streaming line when one is open (the cursor is at its end). */
  const draw = () => {
    const partialRows = rows(partial, columns());
    o.out.write(`${partialRows > 0 ? "\n" : ""}${statusLine()}`);
    drawn = partialRows + 1;
  };
  const write = (text: string) => {
    if (text === "" && drawn > 0) return;
    const column = width(partial) % columns();
    if (column > 0 && drawn === rows(partial, columns()) + 1) {
      // Back to the end of the streaming line, so a delta costs its own length, not the line's.
      o.out.write(`\r\x1b[2K\x1b[1A\x1b[${column + 1}G${text}`);
    } else {
      erase();
      o.out.write(partial + text);
    }
    drawn = 0;
    partial = (partial + text).slice((partial + text).lastIndexOf("\n") + 1);
    draw();
  };
  const timer = setInterval(() => {
    frame++;
    if (drawn === 0) return;
    o.out.write(`\r\x1b[2K${statusLine()}`);
  }, TICK_MS);
  timer.unref();
  write("");

  return {
    event(event) {
      lastSeq = event.seq;
      if (event.type === ControlEventType.RUN_FINISHED) ended = Date.parse(event.time);
      write(transcript.render(event));
    },
    status(next) {
      status = next;
      o.out.write(`\r\x1b[2K${statusLine()}`);
    },
    connection(reason) {
      lost = reason;
      o.out.write(`\r\x1b[2K${statusLine()}`);
    },
    finish(final) {
      clearInterval(timer);
      erase();
      o.out.write(partial + transcript.close());
      partial = "";
      if (final === null) return;
      const mark = final === "succeeded" ? p.green("✔") : p.red("✘");
      o.out.write(`${mark} ${o.runId} ${final} · ${elapsed()} · ${events(lastSeq)}\n`);
    },
  };
}
