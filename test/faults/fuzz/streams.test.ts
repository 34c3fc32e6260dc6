import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_FRAME_BYTES, STREAM_HEADERS as H } from "../../../src/protocol/index.ts";
import { call, KEY_A } from "../../edge/helpers.ts";
import { applyCredential, carrier, credential, headerSafe, resolveCredential, wellFormed } from "./credentials.ts";
import { type Fixture, makeFixture, resolveIds } from "./fixture.ts";
import { anyJson, deepText, nastyString, notJsonText, numberText, queryValue } from "./nasty.ts";
import { expectUnchanged, FuzzTally, fuzz, fuzzSeed, judgeResponse, storedRun } from "./oracle.ts";

// Fuzzing the stream routes in the Workers runtime: a run's read-only stream
// (/v1/runs/:id/stream) and generic Durable Streams (/v1/stream/{path}), with generated methods,
// paths, offsets, protocol headers and bodies.

const RUNS = 1_300;
const tally = new FuzzTally();
const seed = fuzzSeed("the stream routes");
afterAll(() => tally.report("the stream routes", seed));

const offset = fc.oneof(
  fc.constantFrom(
    "-1",
    "now",
    "0000000000000000_0000000000000000",
    "0000000000000001_0000000000000010",
    "9999999999999999_9999999999999999",
  ),
  queryValue,
);
const readQuery = fc.array(
  fc.tuple(
    fc.constantFrom("offset", "offset", "live", "cursor", "x"),
    fc.oneof(offset, fc.constantFrom("long-poll", "sse", "true")),
  ),
  { maxLength: 3 },
);

const header = (name: string, values: fc.Arbitrary<string>) =>
  fc.option(
    values.map((v) => [name, v] as const),
    { freq: 3 },
  );
const streamHeaders = fc
  .tuple(
    header(
      "content-type",
      fc.constantFrom(
        "application/json",
        "text/plain",
        "application/octet-stream",
        "json",
        "",
        "application/json; charset=utf-8",
      ),
    ),
    header(H.seq, fc.oneof(queryValue, fc.constantFrom("a", "b", "0001"))),
    header(H.ttl, fc.oneof(numberText, queryValue)),
    header(
      H.expiresAt,
      fc.oneof(nastyString, fc.constantFrom("2030-01-01T00:00:00Z", "2000-01-01T00:00:00Z", "2030-13-40T99:99:99Z")),
    ),
    header(H.closed, fc.constantFrom("true", "false", "1", "")),
    header(H.producerId, fc.oneof(fc.constantFrom("p1", "p2"), nastyString)),
    header(H.producerEpoch, numberText),
    header(H.producerSeq, numberText),
    header(H.forkedFrom, fc.constantFrom("{stream}", "missing", "../x", "")),
    header(H.forkOffset, offset),
    header("if-none-match", fc.constantFrom("*", '"x"', "")),
  )
  .map((pairs) => pairs.filter((p) => p !== null));

const streamPath = fc.oneof(
  { weight: 8, arbitrary: fc.constant("{stream}") },
  { weight: 2, arbitrary: fc.constantFrom("{stream}/child", "{stream}-fork") },
  { weight: 2, arbitrary: nastyString.map((s) => encodeURIComponent(wellFormed(s))) },
  { weight: 1, arbitrary: fc.constantFrom("", "..", "a/../b", "%2e%2e", "a//b", ".", "a/./b", "x".repeat(1100)) },
);

const body = fc.oneof(
  { weight: 6, arbitrary: anyJson.map((v) => JSON.stringify([v])) },
  { weight: 2, arbitrary: anyJson.map((v) => JSON.stringify(v) ?? "null") },
  { weight: 2, arbitrary: notJsonText },
  { weight: 1, arbitrary: deepText },
  { weight: 1, arbitrary: fc.constantFrom("", "[]", `"${"x".repeat(MAX_FRAME_BYTES)}"`) },
);

const request = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("run stream" as const),
      method: fc.constantFrom("GET", "GET", "HEAD", "POST", "PUT", "DELETE"),
      path: fc.constantFrom("{run}", "{run}", "{other}", "{foreign}", "{missing}"),
      query: readQuery,
      credential,
      carrier,
      headers: fc.constant([] as Array<readonly [string, string]>),
      body: fc.constant(""),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("stream" as const),
      method: fc.constantFrom("PUT", "POST", "POST", "POST", "GET", "GET", "HEAD", "DELETE", "PATCH"),
      path: streamPath,
      query: readQuery,
      credential: fc.oneof({ weight: 6, arbitrary: fc.constant("key-a") }, credential),
      carrier,
      headers: streamHeaders,
      body,
    }),
  },
);
type FuzzedRequest = typeof request extends fc.Arbitrary<infer R> ? R : never;

let fixture: Fixture;
let stream = "";

async function freshFixture(): Promise<void> {
  fixture?.runner.close();
  fixture = await makeFixture();
  stream = `fuzz-${crypto.randomUUID()}`;
  const created = await call(`/v1/stream/${stream}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify([{ n: 1 }, { n: 2 }]),
  });
  expect(created.status).toBe(201);
}

/** A generic stream as stored: what a read from the start returns, and where its tail is. */
async function storedStream(): Promise<{ record: unknown; log: string }> {
  const read = await call(`/v1/stream/${stream}?offset=-1`, { key: KEY_A });
  const record = { status: read.status, next: read.headers.get(H.nextOffset), closed: read.headers.get(H.closed) };
  return { record, log: await read.text() };
}

function send(r: FuzzedRequest): Promise<Response> {
  const fill = (text: string) => resolveIds(text, fixture).replaceAll("{stream}", stream);
  const path = r.kind === "run stream" ? `/v1/runs/${fill(r.path)}/stream` : `/v1/stream/${fill(r.path)}`;
  const query = new URLSearchParams();
  for (const [name, value] of r.query) query.append(name, wellFormed(value));
  const headers = new Headers();
  for (const [name, value] of r.headers) headers.set(name, headerSafe(fill(value)));
  applyCredential(resolveCredential(r.credential, fixture.credentials), r.carrier, headers, query);
  const q = query.toString();
  const withBody = r.method !== "GET" && r.method !== "HEAD" && r.body !== "";
  return call(`${path}${q ? `?${q}` : ""}`, { method: r.method, key: null, headers, body: withBody ? r.body : null });
}

describe("fuzzing the stream routes", () => {
  it(`${RUNS} generated requests: never ≥ 500, every refusal documented, nothing stored by a refusal`, async () => {
    await freshFixture();
    let runBaseline = await storedRun(fixture.runId);
    let streamBaseline = await storedStream();
    await fuzz(seed, RUNS, request, async (r) => {
      const what = `${r.method} ${r.kind} ${r.path} query=${JSON.stringify(r.query)} headers=${JSON.stringify(r.headers)} credential=${r.credential} body=${r.body.slice(0, 200)}`;
      const refused = await judgeResponse(await send(r), r.method, what, tally);
      tally.inputs++;
      if (r.kind === "run stream") {
        // A run's stream is read-only: nothing sent to it changes the run, answered or refused.
        if (r.path === "{run}") runBaseline = await expectUnchanged(fixture.runId, runBaseline, what);
        return;
      }
      if (refused) streamBaseline = await expectUnchanged(stream, streamBaseline, what, KEY_A, storedStream);
      else streamBaseline = await storedStream();
      if (streamBaseline.record && (streamBaseline.record as { status: number }).status !== 200) {
        await freshFixture();
        runBaseline = await storedRun(fixture.runId);
        streamBaseline = await storedStream();
      }
    });
    expect(tally.inputs).toBe(RUNS);
    expect(tally.serverErrors).toBe(0);
  });
});
