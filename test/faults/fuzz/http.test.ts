import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_FRAME_BYTES, RUN_ID_PATTERN } from "../../../src/protocol/index.ts";
import { call, KEY_A, KEY_B } from "../../edge/helpers.ts";
import { applyCredential, carrier, credential, headerSafe, resolveCredential, wellFormed } from "./credentials.ts";
import { type Fixture, makeFixture, resolveIds } from "./fixture.ts";
import { anyJson, bodyText, craftedCursor, nastyNumber, nastyString, queryValue } from "./nasty.ts";
import { expectUnchanged, FuzzTally, fuzz, fuzzSeed, judgeResponse, storedRun } from "./oracle.ts";

// Fuzzing the HTTP API in the Workers runtime: generated requests to every run route and beyond,
// with every kind of credential, query and body.

const RUNS = 1_600;
const tally = new FuzzTally();
const seed = fuzzSeed("the HTTP API");
let fixture: Fixture;

beforeAll(async () => {
  fixture = await makeFixture();
});
afterAll(() => {
  tally.report("the HTTP API", seed);
});

const runIdSlot = fc.oneof(
  { weight: 12, arbitrary: fc.constant("{run}") },
  { weight: 3, arbitrary: fc.constantFrom("{other}", "{foreign}", "{missing}") },
  { weight: 2, arbitrary: nastyString.map((s) => encodeURIComponent(wellFormed(s))) },
  { weight: 1, arbitrary: fc.constantFrom("..", "%2e%2e", "..%2f..", "a%00b", "%ff", "%", "a?b", "a#b", " ") },
);

const timeouts = fc.record(
  {
    claimMs: nastyNumber,
    heartbeatMs: nastyNumber,
    takeoverMs: nastyNumber,
    approvalMs: nastyNumber,
    idleMs: nastyNumber,
    runMs: nastyNumber,
  },
  { requiredKeys: [] },
);

/** Each route's bodies, shaped like its own and then broken in every field. */
const BODIES = {
  create: bodyText({
    runId: fc.oneof(nastyString, fc.constantFrom("{run}", "{other}")),
    agent: fc.oneof(anyJson, fc.constantFrom("demo", "codex", "claude-code", "Bad Name", ""), nastyString),
    input: fc.oneof(anyJson, fc.record({ prompt: fc.oneof(nastyString, anyJson) })),
    queue: fc.oneof(fc.constantFrom("default", "fuzz-q"), nastyString),
    recovery: fc.oneof(fc.constantFrom("auto", "manual"), nastyString),
    maxRecoveries: nastyNumber,
    metadata: fc.dictionary(nastyString, anyJson, { maxKeys: 3 }),
    timeouts,
    retentionMs: nastyNumber,
  }),
  command: bodyText({
    commandId: nastyString,
    type: fc.constantFrom("input", "interrupt", "cancel"),
    text: nastyString,
  }),
  approval: bodyText({ decision: fc.constantFrom("approve", "deny"), reason: nastyString }),
  cancel: bodyText({ commandId: nastyString, reason: nastyString }),
  token: bodyText({ role: fc.constantFrom("runner", "viewer"), interact: fc.boolean(), ttlMs: nastyNumber }),
  poolKey: bodyText({ label: nastyString }),
  queue: bodyText({ maxConcurrent: fc.oneof(nastyNumber, fc.constant(null)), assignMs: nastyNumber }),
  webhook: bodyText({
    url: fc.oneof(
      fc.constantFrom("https://hooks.example.com/fuzz", "http://127.0.0.1:9/fuzz", "http://example.com/x", "ftp://x/y"),
      nastyString,
    ),
    events: fc.oneof(
      fc.array(fc.constantFrom("run.waiting", "run.failed", "run.cancelled", "run.exploded", ""), { maxLength: 9 }),
      anyJson,
    ),
  }),
  // What AG-UI's HttpAgent POSTs (a RunAgentInput), which the route does not read.
  aguiInput: bodyText({
    threadId: nastyString,
    runId: fc.oneof(nastyString, fc.constant("{run}")),
    messages: fc.oneof(anyJson, fc.array(fc.record({ id: nastyString, role: nastyString, content: nastyString }))),
    tools: anyJson,
    state: anyJson,
  }),
  none: fc.constant(""),
};

/** The API's routes as [method, path after /v1/runs, body], with `{id}` the run and `{junk}` anything. */
const ROUTES: Array<[string, string, keyof typeof BODIES]> = [
  ["POST", "", "create"],
  ["GET", "", "none"],
  ["GET", "/{id}", "none"],
  ["DELETE", "/{id}", "none"],
  ["GET", "/{id}/events", "none"],
  ["POST", "/{id}/commands", "command"],
  ["POST", "/{id}/approvals/req-1", "approval"],
  ["POST", "/{id}/approvals/{junk}", "approval"],
  ["GET", "/{id}/approvals/req-1", "none"],
  ["GET", "/{id}/approvals/{junk}", "none"],
  ["POST", "/{id}/cancel", "cancel"],
  ["POST", "/{id}/tokens", "token"],
  ["DELETE", "/{id}/tokens", "none"],
  ["DELETE", "/{id}/tokens/{junk}", "none"],
  ["GET", "/{id}/runner", "none"],
  ["GET", "/{id}/watch", "none"],
  ["GET", "/{id}/stream", "none"],
  // The run as AG-UI SSE: `?after=` and `Last-Event-ID` (request.lastEventId) pick the resume point.
  ["GET", "/{id}/agui", "none"],
  ["POST", "/{id}/agui", "aguiInput"],
  // Pool routes, whose paths are not under /v1/runs (the leading "!").
  ["POST", "!/v1/pool-keys", "poolKey"],
  ["GET", "!/v1/pool-keys", "none"],
  ["DELETE", "!/v1/pool-keys/{junk}", "none"],
  ["GET", "!/v1/pools", "none"],
  ["GET", "!/v1/pools/connect", "none"],
  ["GET", "!/v1/queues", "none"],
  ["GET", "!/v1/queues/{junk}", "none"],
  ["PUT", "!/v1/queues/{junk}", "queue"],
  ["PUT", "!/v1/queues/fuzz-q", "queue"],
  // Webhooks: endpoints of the tenant, and a run's notifications.
  ["POST", "!/v1/webhooks", "webhook"],
  ["GET", "!/v1/webhooks", "none"],
  ["DELETE", "!/v1/webhooks/{junk}", "none"],
  ["GET", "!/v1/webhooks/{junk}/deliveries", "none"],
  ["POST", "!/v1/webhooks/{junk}/ping", "none"],
  ["POST", "!/v1/webhooks/{junk}/deliveries/{junk}/redeliver", "none"],
  ["GET", "/{id}/notifications", "none"],
];

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];

/** Mostly a real route with its own method; sometimes another method, or a path that is no route. */
const route = fc
  .tuple(
    fc.constantFrom(...ROUTES),
    fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    runIdSlot,
    nastyString,
    fc.oneof(
      { weight: 12, arbitrary: fc.constant(null) },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom("/", "/v1", "/v2/runs", "//v1/runs", "/v1/RUNS", "/v1/runs/x/../../runs", "/openapi.json")
          .map((path) => ({ path })),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(
            "/docs",
            "/docs/../../wrangler.toml",
            "/docs/%2e%2e/x",
            "/schemas/RunnerFrame.json",
            "/schemas/nope",
          )
          .map((path) => ({ path })),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom("/events/extra", "/nope", "/approvals", "/tokens/x").map((suffix) => ({ suffix })),
      },
    ),
  )
  .chain(([[method, suffix, bodyKind], otherMethod, id, junk, odd]) => {
    const filled = suffix.replace("{id}", id).replace("{junk}", encodeURIComponent(wellFormed(junk)));
    let path = filled.startsWith("!") ? filled.slice(1) : `/v1/runs${filled}`;
    if (odd && "path" in odd) path = odd.path;
    else if (odd) path = `/v1/runs/${id}${odd.suffix}`;
    return BODIES[bodyKind].map((text) => ({ method: otherMethod ?? method, path, text }));
  });

/** The route's own body text, or raw bytes, or a body over 1 MiB (with a length, or chunked). */
type Payload =
  | { kind: "route" }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "oversize"; bytes: number; chunked: boolean };

const payload: fc.Arbitrary<Payload> = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ kind: "route" as const }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: "bytes" as const, bytes })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(MAX_FRAME_BYTES + 1, 2 * MAX_FRAME_BYTES, 5 * MAX_FRAME_BYTES), fc.boolean())
      .map(([bytes, chunked]) => ({ kind: "oversize" as const, bytes, chunked })),
  },
);

const request = fc.record({
  route,
  query: fc.array(
    fc.oneof(
      fc.tuple(
        fc.constantFrom("after", "limit", "status", "cursor", "offset", "live", "token", "queue", "x"),
        queryValue,
      ),
      fc.tuple(fc.constant("cursor"), craftedCursor),
    ),
    { maxLength: 3 },
  ),
  credential,
  carrier,
  contentType: fc.constantFrom(
    "application/json",
    "application/json",
    "text/plain",
    "",
    "application/x-www-form-urlencoded",
  ),
  upgrade: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  payload,
  /** A resume point, as EventSource sends it (the AG-UI route reads it; the others must ignore it). */
  lastEventId: fc.oneof(
    { weight: 6, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: fc.constantFrom("0", "1", "2", "3", "4", "999999", "") },
    { weight: 1, arbitrary: queryValue },
  ),
});
type FuzzedRequest = typeof request extends fc.Arbitrary<infer R> ? R : never;

function bodyOf(r: FuzzedRequest): BodyInit | null {
  const p = r.payload;
  if (p.kind === "route") return resolveIds(r.route.text, fixture) || null;
  if (p.kind === "bytes") return p.bytes;
  if (!p.chunked) return "x".repeat(p.bytes);
  let left = p.bytes;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left <= 0) return controller.close();
      const chunk = new Uint8Array(Math.min(64 * 1024, left)).fill(0x7b);
      left -= chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}

function send(r: FuzzedRequest): Promise<Response> {
  const [pathname = "/", search = ""] = resolveIds(r.route.path, fixture).split("?");
  const query = new URLSearchParams(search);
  for (const [name, value] of r.query) query.append(name, wellFormed(value));
  const headers = new Headers();
  applyCredential(resolveCredential(r.credential, fixture.credentials), r.carrier, headers, query);
  if (r.contentType) headers.set("content-type", r.contentType);
  if (r.upgrade) headers.set("upgrade", "websocket");
  if (r.lastEventId !== null) headers.set("last-event-id", headerSafe(r.lastEventId));
  const method = r.route.method;
  const q = query.toString();
  return call(`${pathname}${q ? `?${q}` : ""}`, {
    method,
    key: null,
    headers,
    body: method === "GET" || method === "HEAD" ? null : bodyOf(r),
  });
}

/** The run a request aims at, and the key that reads it back. */
function target(r: FuzzedRequest): { runId: string; key: string } {
  if (r.route.path.includes("{other}")) return { runId: fixture.otherRunId, key: KEY_A };
  if (r.route.path.includes("{foreign}")) return { runId: fixture.foreignRunId, key: KEY_B };
  return { runId: fixture.runId, key: KEY_A };
}

function describeRequest(r: FuzzedRequest): string {
  const p = r.payload;
  const body =
    p.kind === "route"
      ? r.route.text.slice(0, 200)
      : p.kind === "bytes"
        ? `${p.bytes.length} bytes`
        : `${p.bytes} bytes${p.chunked ? " chunked" : ""}`;
  const resume = r.lastEventId === null ? "" : ` last-event-id=${JSON.stringify(r.lastEventId)}`;
  return `${r.route.method} ${r.route.path} query=${JSON.stringify(r.query)}${resume} credential=${r.credential} via ${r.carrier} body=${body}`;
}

/** A refused `POST /v1/runs` that named a new run id did not create it. */
async function expectNotCreated(r: FuzzedRequest, what: string): Promise<void> {
  if (r.route.method !== "POST" || r.route.path !== "/v1/runs" || r.payload.kind !== "route") return;
  let runId: unknown;
  try {
    runId = (JSON.parse(r.route.text) as { runId?: unknown } | null)?.runId;
  } catch {
    return;
  }
  if (typeof runId !== "string" || !RUN_ID_PATTERN.test(runId)) return;
  const status = (await call(`/v1/runs/${runId}`, { key: KEY_A })).status;
  if (status !== 404) throw new Error(`${what}: refused, yet run ${runId} answers ${status}`);
}

/** The tenant's endpoints before a `POST /v1/webhooks`, to compare with after a refusal; null for other requests. */
async function webhooksBefore(r: FuzzedRequest): Promise<string | null> {
  if (r.route.method !== "POST" || r.route.path !== "/v1/webhooks") return null;
  return (await call("/v1/webhooks", { key: KEY_A })).text();
}

/** A refused `POST /v1/webhooks` registered nothing: the list is as it was. */
async function expectNoWebhook(before: string | null, what: string): Promise<void> {
  if (before === null) return;
  const after = await (await call("/v1/webhooks", { key: KEY_A })).text();
  if (after !== before) throw new Error(`${what}: refused, yet the webhooks changed: ${after.slice(0, 300)}`);
}

/** An accepted AG-UI stream (the fuzz project bounds its life and heartbeat to milliseconds). */
function isAguiStream(r: FuzzedRequest, response: Response): boolean {
  const agui = /^\/v1\/runs\/[^/]+\/agui$/.test(r.route.path) && ["GET", "POST"].includes(r.route.method);
  return agui && response.ok && !response.webSocket;
}

/** An accepted AG-UI stream is SSE and opens with its RUN_STARTED; the rest is cancelled by the judge. */
async function expectAguiOpening(response: Response, what: string): Promise<void> {
  const type = response.headers.get("content-type");
  if (type !== "text/event-stream") throw new Error(`${what}: an AG-UI stream answered content-type ${type}`);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  // Up to the first frame's end; the stream itself ends within AGUI_STREAM_LIFETIME_MS.
  while (!text.includes("\n\n")) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  reader.releaseLock();
  if (!text.startsWith('data: {"type":"RUN_STARTED"')) {
    throw new Error(`${what}: an AG-UI stream opened with ${JSON.stringify(text.slice(0, 200))}`);
  }
}

/** The last stored state seen of each run, to compare with after the next input. */
const baselines = new Map<string, Awaited<ReturnType<typeof storedRun>>>();

describe("fuzzing the HTTP API", () => {
  it(`${RUNS} generated requests: never ≥ 500, every refusal documented, nothing stored by a refusal`, async () => {
    await fuzz(seed, RUNS, request, async (r) => {
      const { runId, key } = target(r);
      const before = baselines.get(runId) ?? (await storedRun(runId, key));
      const what = describeRequest(r);
      const hooks = await webhooksBefore(r);
      const response = await send(r);
      if (isAguiStream(r, response)) await expectAguiOpening(response, what);
      const refused = await judgeResponse(response, r.route.method, what, tally);
      tally.inputs++;
      const after = refused ? await expectUnchanged(runId, before, what, key) : await storedRun(runId, key);
      baselines.set(runId, after);
      if (refused) await expectNotCreated(r, what);
      if (refused) await expectNoWebhook(hooks, what);
      // A fresh fixture every so often, and once an accepted request moved this one on: it may
      // have been decided, cancelled or purged, and a delivered cancel arms a 30 s alarm.
      const moved = runId === fixture.runId && (after.record as { status?: string }).status !== "waiting";
      // An accepted revocation ended the fixture's tokens (and closed its runner): start afresh.
      const revoked = !refused && r.route.method === "DELETE" && r.route.path.includes("/tokens");
      if (tally.inputs % 200 === 0 || moved || revoked) {
        fixture.runner.close();
        fixture = await makeFixture();
        baselines.clear();
      }
    });
    expect(tally.inputs).toBe(RUNS);
    expect(tally.serverErrors).toBe(0);
  });
});
