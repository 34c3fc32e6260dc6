/**
 * Secret values (the `--env` values passed to the agent, the runner token) and how they can
 * appear in an agent's output: as they are, and as a JSON string spells them (`"` and `\` and
 * control characters escaped; non-ASCII also as `\uXXXX`, as many JSON writers do). Every form is
 * replaced by `[redacted]` in journal lines, events and log lines alike.
 */
export const REDACTED = "[redacted]";

/** Values shorter than this are left alone: replacing "1" or "on" everywhere would wreck every line. */
export const MIN_SECRET_LENGTH = 4;

/** Every spelling of each value, longest first (so a longer form is replaced before its own parts). */
export function secretForms(values: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_SECRET_LENGTH) continue;
    const json = JSON.stringify(value).slice(1, -1);
    const ascii = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    for (const form of [value, json, ascii]) forms.add(form);
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

export function redactText(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
  return out;
}

/** The same on raw bytes, so everything else of a line stays byte for byte what the agent wrote. */
export function redactBytes(bytes: Buffer, forms: readonly Buffer[]): Buffer {
  let out = bytes;
  for (const form of forms) {
    let at = out.indexOf(form);
    if (at < 0) continue;
    const parts: Buffer[] = [];
    let from = 0;
    while (at >= 0) {
      parts.push(out.subarray(from, at), REDACTED_BYTES);
      from = at + form.length;
      at = out.indexOf(form, from);
    }
    parts.push(out.subarray(from));
    out = Buffer.concat(parts);
  }
  return out;
}
const REDACTED_BYTES = Buffer.from(REDACTED);
