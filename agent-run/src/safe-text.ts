/**
 * Run data is written by the agent, so it may carry terminal control sequences: OSC 52 sets the
 * clipboard, CSI cursor moves and a bare CR hide or overwrite lines (an approval prompt among
 * them), C1 controls do the same in one byte, bidi overrides reorder what is read. Everything
 * the CLI prints from a run passes through here: as text, each such character shows as its
 * escape (`\x1b`, `\x9b`, `\r`, `\u202e`); as JSON, as a `\u` escape, so the value is unchanged.
 */
/** C0 but tab and newline, DEL, C1, the bidi controls, and the line and paragraph separators. */
function active(code: number): boolean {
  if (code < 0x20) return code !== 0x09 && code !== 0x0a;
  if (code < 0x7f) return false;
  if (code <= 0x9f) return true;
  return (
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

const hex = (code: number, width: number) => code.toString(16).padStart(width, "0");

function escapeActive(text: string, spell: (code: number) => string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!active(code)) continue;
    out += text.slice(from, i) + spell(code);
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Text safe to write to a terminal: newlines and tabs kept, CRLF read as a newline. */
export function terminalText(text: string): string {
  return escapeActive(text.replaceAll("\r\n", "\n"), (code) =>
    code === 0x0d ? "\\r" : code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`,
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
  // JSON.stringify escapes C0 itself; what is left (DEL, C1, bidi) can only sit inside strings.
  return escapeActive(JSON.stringify(value) ?? "null", (code) => `\\u${hex(code, 4)}`);
}
