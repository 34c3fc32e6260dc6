/**
 * One-line logging to stderr. Every line passes through the redactor, so the value of a
 * variable passed with `--env` can never reach a log line even if an error message quotes it.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  /** Adds values that must never be printed. */
  redact(values: Iterable<string>): void;
  /** The redacted form of any text. */
  scrub(text: string): string;
}

export function createLogger(options: { quiet?: boolean; prefix?: string } = {}): Logger {
  const secrets = new Set<string>();
  const prefix = options.prefix ?? "runner-bridge";
  const scrub = (text: string): string => {
    let out = text;
    for (const s of secrets) out = out.split(s).join("[redacted]");
    return out.replace(/\r?\n/g, " ");
  };
  const write = (level: string, message: string): void => {
    process.stderr.write(`${prefix}: ${level}${scrub(message)}\n`);
  };
  return {
    info(message) {
      if (!options.quiet) write("", message);
    },
    warn(message) {
      write("warning: ", message);
    },
    redact(values) {
      // Very short values would turn every log line into confetti; they are still never written.
      for (const v of values) if (v.length >= 4) secrets.add(v);
    },
    scrub,
  };
}
