import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nestsDeeperThan } from "../../src/protocol/json.ts";

/** The depth check as first written, one character at a time: the oracle for the fast one. */
function nestsDeeperOneByOne(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (inString) {
      if (char === "\\") at++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "[" || char === "{") {
      depth++;
      if (depth > limit) return true;
    } else if (char === "]" || char === "}") depth--;
  }
  return false;
}

// Texts dense in what the scan has to get right: quotes, runs of backslashes, brackets.
const jsonish = fc
  .array(fc.constantFrom('"', "\\", "\\\\", '\\"', "[", "]", "{", "}", "a", ":", ",", "é", "😀"), { maxLength: 60 })
  .map((parts) => parts.join(""));
const nested = fc.jsonValue({ maxDepth: 8, stringUnit: "binary" }).map((value) => JSON.stringify(value));

describe("JSON nesting depth, checked before parsing", () => {
  it("agrees with a character-by-character scan on any text and limit", () => {
    fc.assert(
      fc.property(fc.oneof(jsonish, nested), fc.integer({ min: 0, max: 10 }), (text, limit) => {
        expect(nestsDeeperThan(text, limit)).toBe(nestsDeeperOneByOne(text, limit));
      }),
      { numRuns: 5_000, seed: 9 },
    );
  });

  it("counts brackets outside strings only, however the strings escape their quotes", () => {
    expect(nestsDeeperThan('[["\\"[[[[", "\\\\"]]', 2)).toBe(false);
    expect(nestsDeeperThan('[["\\\\", [[]]]]', 3)).toBe(true);
    expect(nestsDeeperThan(`${"[".repeat(129)}${"]".repeat(129)}`, 128)).toBe(true);
    expect(nestsDeeperThan(`${"[".repeat(128)}${"]".repeat(128)}`, 128)).toBe(false);
    expect(nestsDeeperThan('["unterminated [[[[', 1)).toBe(false);
  });
});
