import type { ErrorCode } from "./errors.ts";
import { MAX_JSON_DEPTH } from "./limits.ts";
import { type Failure, fail, ok, type Result } from "./result.ts";

/**
 * True when `text` nests arrays and objects deeper than `limit`. Scans the text without parsing
 * it, so the check itself is safe on any depth. String contents are skipped with `indexOf` to
 * their closing quote (one not escaped by an odd run of backslashes): most of an agent event's
 * bytes are inside strings, and stepping through them one character at a time was most of the
 * scan's cost.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  // Deeper than `limit` takes more than `limit` opening brackets.
  if (text.length <= limit) return false;
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === 0x22 /* " */) {
      at = closingQuote(text, at);
      if (at < 0) return false; // Unterminated: not JSON, and not deep either.
    } else if (char === 0x5b /* [ */ || char === 0x7b /* { */) {
      depth++;
      if (depth > limit) return true;
    } else if (char === 0x5d /* ] */ || char === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote closing the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c /* \ */) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/**
 * True when the parsed `value` nests arrays and objects deeper than `limit`: the same judgement
 * nestsDeeperThan makes of the text, on a value JSON.parse made (its recursion stops at `limit`).
 */
export function valueNestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit <= 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (valueNestsDeeperThan(item, limit - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (valueNestsDeeperThan(record[key], limit - 1)) return true;
  return false;
}

/** The refusal of JSON nested deeper than MAX_JSON_DEPTH, with `code`. */
export function tooDeepFailure(code: ErrorCode): Failure {
  return fail(code, `JSON may nest at most ${MAX_JSON_DEPTH} levels of arrays and objects`);
}

/**
 * Parses one JSON body or frame: `invalid_json` when it is not JSON, `tooDeep` when it nests
 * deeper than MAX_JSON_DEPTH (checked first, so nothing deep is ever parsed).
 */
export function parseJson(text: string, tooDeep: ErrorCode): Result<unknown> {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) return tooDeepFailure(tooDeep);
  try {
    return ok(JSON.parse(text));
  } catch {
    return fail("invalid_json", "not valid JSON");
  }
}
