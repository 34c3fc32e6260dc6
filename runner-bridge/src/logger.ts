import { redactText, secretForms } from "./redact.ts";

/**
 * One-line logging to stderr. Every line passes through the redactor, so the value of a
 * variable passed with `--env` can never reach a log line even if an error message quotes it.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  /** Adds values that must never be printed. */
  redact(values: Iterable<string>): void;
  /** The redacted form of any text, on one line. */
  scrub(text: string): string;
  /** The values added with `redact`. */
  secrets(): string[];
}

export function createLogger(options: { quiet?: boolean; prefix?: string } = {}): Logger {
  const secrets = new Set<string>();
  let forms: string[] = [];
  const prefix = options.prefix ?? "runner-bridge";
  const scrub = (text: string): string => redactText(text, forms).replace(/\r?\n/g, " ");
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
      for (const v of values) secrets.add(v);
      forms = secretForms(secrets);
    },
    secrets: () => [...secrets],
    scrub,
  };
}
