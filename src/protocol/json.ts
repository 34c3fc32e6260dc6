import type { ErrorCode } from "./errors.ts";
import { MAX_JSON_DEPTH } from "./limits.ts";
import { fail, ok, type Result } from "./result.ts";

/**
 * True when `text` nests arrays and objects deeper than `limit`. Scans the text without parsing
 * it, so the check itself is safe on any depth.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (inString) {
      if (char === 0x5c /* \ */) at++;
      else if (char === 0x22 /* " */) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x5b /* [ */ || char === 0x7b /* { */) {
      depth++;
      if (depth > limit) return true;
    } else if (char === 0x5d /* ] */ || char === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

/**
 * Parses one JSON body or frame: `invalid_json` when it is not JSON, `tooDeep` when it nests
 * deeper than MAX_JSON_DEPTH (checked first, so nothing deep is ever parsed).
 */
export function parseJson(text: string, tooDeep: ErrorCode): Result<unknown> {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    return fail(tooDeep, `JSON may nest at most ${MAX_JSON_DEPTH} levels of arrays and objects`);
  }
  try {
    return ok(JSON.parse(text));
  } catch {
    return fail("invalid_json", "not valid JSON");
  }
}
