import fs from "node:fs";

/**
 * An append-only ndjson file of envelopes keyed by commandId. The inbox (`{commandId, line}` or
 * `{commandId, close: true}`, fed to the agent's stdin by the supervisor) and the control log
 * (`{commandId, kind}` for commands applied as signals) both use it: before anything is appended
 * the file is searched for the commandId, so across any number of bridge crashes and takeovers a
 * command is written at most once.
 */
export interface Envelope {
  commandId: string;
  line?: string;
  close?: true;
  kind?: string;
}

export class EnvelopeLog {
  readonly file: string;
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
        const env = JSON.parse(raw) as Envelope;
        if (env && typeof env.commandId === "string") out.push(env);
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
   * Appends the envelopes unless the first one's commandId is already present.
   * Returns true when written, false when it was there already.
   */
  appendOnce(envelopes: Envelope[]): boolean {
    const first = envelopes[0];
    if (!first) return false;
    if (this.has(first.commandId)) return false;
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
    return true;
  }
}
