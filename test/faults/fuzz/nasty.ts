import fc from "fast-check";
import { MAX_BATCH_EVENTS, MAX_FRAME_BYTES, MAX_JSON_DEPTH } from "../../../src/protocol/index.ts";
import { MAX_DEADLINE_MS } from "../../../src/protocol/run.ts";

// Generators of hostile values shared by the fuzzing suites: strings, numbers, JSON and raw text
// chosen to sit on or across every limit the edge has.

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }), // lone surrogates, control characters
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "\ud800",
    "../../etc/passwd",
    "..",
    "%2e%2e%2f",
    "..%2F..%2Fsecret",
    "a/../b",
    "\\..\\..\\windows",
    "a".repeat(128),
    "a".repeat(129),
    "a".repeat(200),
    "a".repeat(201),
    "x".repeat(9000),
    "__proto__",
    "constructor",
    "null",
    "rt1.",
    "Bearer",
    "<script>alert(1)</script>",
    "🚀".repeat(64),
    "é\u0301",
    "\u202e\u0645",
  ),
);

export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    0.5,
    1.5,
    127,
    128,
    129,
    MAX_BATCH_EVENTS,
    MAX_BATCH_EVENTS + 1,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32,
    2 ** 53 - 1,
    2 ** 53 + 2,
    1e308,
    -1e308,
    Number.MIN_VALUE,
    MAX_DEADLINE_MS,
    MAX_DEADLINE_MS + 1,
    MAX_FRAME_BYTES,
  ),
);

/** Numbers as JSON text, including what JSON.stringify never writes (1e400 parses to Infinity). */
export const numberText: fc.Arbitrary<string> = fc.oneof(
  nastyNumber.map((n) => JSON.stringify(n)),
  fc.constantFrom(
    "1e400",
    "-1e400",
    "1.0",
    "-0",
    "1E2",
    "0.0000001",
    "9007199254740993",
    "123456789012345678901234567890",
  ),
);

/** Query-string values: numbers written every way, and not numbers at all. */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  numberText,
  nastyString,
  fc.constantFrom("", "01", "0x10", " 1", "1 ", "+1", "1_000", "NaN", "Infinity", "-1", "500", "501", "now", "-1"),
);

/** A list cursor as the API writes one (base64 of JSON), with hostile values inside. */
export const craftedCursor: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(numberText, fc.constantFrom('"1"', "null", "[]", "{}")),
    fc.oneof(
      nastyString.map((s) => JSON.stringify(s)),
      numberText,
    ),
  )
  .map(([createdAt, runId]) => {
    const bytes = new TextEncoder().encode(`{"createdAt":${createdAt},"runId":${runId}}`);
    return btoa(String.fromCharCode(...bytes)).replaceAll("=", "");
  });

export const scalar: fc.Arbitrary<unknown> = fc.oneof(nastyNumber, nastyString, fc.boolean(), fc.constant(null));

/** Any JSON value, with nasty scalars and nasty keys. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(nastyString, tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** JSON text nested `depth` levels of arrays or objects, around the limit and far past it. */
export const deepText: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 1_000, 3_000, 20_000), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? "[".repeat(depth) + "]".repeat(depth) : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`,
  );

/** Text that is not JSON, or is JSON of the wrong kind for a body or a frame. */
export const notJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom(
    "{",
    "}",
    '{"a":}',
    "[1,]",
    "{'type':'hello'}",
    "nul",
    "\u0000",
    '{"type":"hello"',
    '"\\ud800"',
    "\ufeff{}",
    "1 2",
    "[]",
    "null",
    "true",
    '"hello"',
    "42",
    '{"__proto__":{"polluted":true}}',
  ),
);

const DROP = Symbol("drop");

/**
 * A JSON document made of `template`'s fields, each kept valid most of the time and otherwise
 * replaced by any JSON or left out; now and then with an unknown field too.
 */
export function mutatedObject(template: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, valid] of Object.entries(template)) {
    fields[key] = fc.oneof({ weight: 10, arbitrary: valid }, { weight: 1, arbitrary: anyJson }, fc.constant(DROP));
  }
  const extra = fc.oneof(
    { weight: 8, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.dictionary(nastyString, anyJson, { minKeys: 1, maxKeys: 2 }) },
  );
  return fc.tuple(fc.record(fields), extra).map(([known, more]) => {
    const kept = Object.fromEntries(Object.entries(known).filter(([, value]) => value !== DROP));
    return { ...kept, ...more };
  });
}

/** A JSON body text: mutated documents, any JSON, non-JSON, deep JSON, or raw numbers in a field. */
export function bodyText(template: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  const keys = Object.keys(template);
  return fc.oneof(
    { weight: 6, arbitrary: mutatedObject(template).map((o) => JSON.stringify(o)) },
    { weight: 2, arbitrary: anyJson.map((v) => JSON.stringify(v) ?? "null") },
    { weight: 2, arbitrary: notJsonText },
    { weight: 1, arbitrary: deepText },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...(keys.length > 0 ? keys : ["x"])), numberText)
        .map(([key, number]) => `{"${key}":${number}}`),
    },
  );
}
