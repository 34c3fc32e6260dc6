import fs from "node:fs";
import { withFileLock } from "./lock.ts";

/**
 * One line of a command file: `{commandId, line}` or `{commandId, close: true}` in the inbox (fed to
 * the agent's stdin by the supervisor), `{commandId, kind}` in the control file (commands applied
 * as signals).
 */
export interface Envelope {
  commandId: string;
  line?: string;
  close?: true;
  kind?: string;
}

/** What an append did: wrote the envelopes, found them there already, or gave up because the bridge halted. */
export type AppendOutcome = "written" | "present" | "abandoned";

/**
 * An append-only ndjson file of envelopes keyed by commandId, each written at most once across any
 * number of bridge crashes and takeovers. Every append is check-then-append under one cross-process
 * lock file, and appends from this process run one at a time in the order they were asked for.
 */
export class CommandFile {
  readonly file: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(file: string) {
    this.file = file;
  }

  /** Every well-formed envelope in the file (torn lines from a crash are skipped). */
  read(): Envelope[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, "utf8");
    } catch {
      return [];
    }
    const out: Envelope[] = [];
    for (const raw of text.split("\n")) {
      if (!raw) continue;
      try {
        const envelope = JSON.parse(raw) as Envelope;
        if (envelope && typeof envelope.commandId === "string") out.push(envelope);
      } catch {
        // torn line
      }
    }
    return out;
  }

  has(commandId: string): boolean {
    return this.read().some((e) => e.commandId === commandId);
  }

  /**
   * Appends the envelopes unless the first one's commandId is already in the file. `halted` is
   * asked again once the lock is held: a bridge that was fenced meanwhile writes nothing.
   */
  appendOnce(envelopes: Envelope[], halted: () => boolean = () => false): Promise<AppendOutcome> {
    const next = this.queue.then(() =>
      withFileLock(`${this.file}.lock`, (): AppendOutcome => (halted() ? "abandoned" : this.appendNow(envelopes))),
    );
    this.queue = next.catch(() => {});
    return next;
  }

  private appendNow(envelopes: Envelope[]): AppendOutcome {
    const first = envelopes[0];
    if (!first || this.has(first.commandId)) return "present";
    let prefix = "";
    try {
      const text = fs.readFileSync(this.file);
      // A predecessor died mid-write: end its torn line so ours stays parseable.
      if (text.length > 0 && text[text.length - 1] !== 0x0a) prefix = "\n";
    } catch {
      // no file yet
    }
    // One write call: a crash leaves either nothing or a torn line that readers skip.
    fs.appendFileSync(this.file, prefix + envelopes.map((e) => `${JSON.stringify(e)}\n`).join(""), { mode: 0o600 });
    return "written";
  }
}
