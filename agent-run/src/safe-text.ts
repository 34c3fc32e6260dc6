/**
 * Run data is written by the agent, so it may carry terminal control sequences: OSC 52 sets the
 * clipboard, CSI cursor moves and a bare CR hide or overwrite lines (an approval prompt among
 * them), C1 controls do the same in one byte, bidi overrides reorder what is read. Everything
 * the CLI prints from a run passes through here: as text, each such character shows as its
 * escape (`\x1b`, `\x9b`, `\r`, `\u202e`); as JSON, as a `\u` escape, so the value is unchanged.
 */
const ACTIVE_IN_TEXT =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves raw of those (it escapes C0 itself). */
const ACTIVE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const hex = (c: string, width: number) => c.charCodeAt(0).toString(16).padStart(width, "0");

/** Text safe to write to a terminal: newlines and tabs kept, CRLF read as a newline. */
export function terminalText(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    .replace(ACTIVE_IN_TEXT, (c) =>
      c === "\r" ? "\\r" : c.charCodeAt(0) <= 0xff ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`,
    );
}

/** A value with every string (keys included) made terminal-safe. */
export function terminalValue<T>(value: T): T {
  if (typeof value === "string") return terminalText(value) as T;
  if (Array.isArray(value)) return value.map((item) => terminalValue(item)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [terminalText(key), terminalValue(item)]),
    ) as T;
  }
  return value;
}

/** One line of JSON with nothing a terminal acts on, parsing to the same value. */
export function terminalJson(value: unknown): string {
  return (JSON.stringify(value) ?? "null").replace(ACTIVE_IN_JSON, (c) => `\\u${hex(c, 4)}`);
}
