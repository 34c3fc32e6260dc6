import { describe, expect, test } from "vitest";
import type { LogState } from "../../src/log/log.ts";
import type { ProducerState } from "../../src/log/producers.ts";
import type { Meta } from "../../src/streams/meta.ts";
import type { AppendRequest } from "../../src/streams/stream-api.ts";
import { judgeAppend } from "../../src/streams/write-rules.ts";

/** The append rules alone, without a Durable Object: a request against a stream's state. */
const text = (value: string) => new TextEncoder().encode(value);
const meta = (over: Partial<Meta> = {}): Meta => ({
  streamId: "s",
  tenant: "t",
  path: "p",
  contentType: "text/plain",
  ttlSeconds: null,
  expiresAt: null,
  expiresAtMs: null,
  touchedAt: 0,
  writerSeq: null,
  ...over,
});
const open: LogState = { tail: { seq: 2, pos: 10 }, closed: false, closedBy: null };
const TAIL = "0000000000000002_0000000000000010";
const request = (over: Partial<AppendRequest> = {}): AppendRequest => ({
  contentType: "text/plain",
  body: text("hi"),
  close: false,
  producer: null,
  writerSeq: null,
  ...over,
});
const claim = (epoch: number, seq: number) => ({ producerId: "p1", epoch, seq });
const judge = (req: AppendRequest, log: LogState = open, stored: ProducerState | null = null, m = meta()) =>
  judgeAppend(req, m, log, stored);

describe("append rules", () => {
  test("a plain append writes its body as entries", () => {
    expect(judge(request())).toEqual({
      ok: true,
      value: { kind: "write", messages: [text("hi")], producerState: null },
    });
  });

  test("a JSON array is one message per element; an empty one is refused", () => {
    const json = meta({ contentType: "application/json" });
    const body = text('[{"a":1}, 2]');
    expect(judge(request({ contentType: "application/json", body }), open, null, json)).toMatchObject({
      ok: true,
      value: { kind: "write", messages: [text('{"a":1}'), text("2")] },
    });
    expect(judge(request({ contentType: "application/json", body: text("[]") }), open, null, json)).toMatchObject({
      ok: false,
      code: "invalid_request",
    });
  });

  test("another content type is a conflict, a missing one a bad request", () => {
    expect(judge(request({ contentType: "application/json" }))).toMatchObject({ ok: false, code: "conflict" });
    expect(judge(request({ contentType: null }))).toMatchObject({ ok: false, code: "invalid_request" });
    expect(judge(request({ contentType: "TEXT/PLAIN; charset=utf-8" }))).toMatchObject({ ok: true });
  });

  test("Stream-Seq must increase past the last one, compared byte-wise", () => {
    const seen = meta({ writerSeq: "b" });
    expect(judge(request({ writerSeq: "a" }), open, null, seen)).toMatchObject({ ok: false, code: "conflict" });
    expect(judge(request({ writerSeq: "b" }), open, null, seen)).toMatchObject({ ok: false, code: "conflict" });
    expect(judge(request({ writerSeq: "ba" }), open, null, seen)).toMatchObject({ ok: true, value: { kind: "write" } });
  });

  test("producer verdicts: accepted, duplicate, stale epoch, gap, epoch not starting at 0", () => {
    const stored = { epoch: 1, lastSeq: 3 };
    expect(judge(request({ producer: claim(1, 4) }), open, stored)).toMatchObject({
      ok: true,
      value: { kind: "write", producerState: { epoch: 1, lastSeq: 4 } },
    });
    expect(judge(request({ producer: claim(1, 3) }), open, stored)).toEqual({
      ok: true,
      value: { kind: "duplicate", tail: TAIL, closed: false, epoch: 1, lastSeq: 3 },
    });
    expect(judge(request({ producer: claim(0, 9) }), open, stored)).toEqual({
      ok: true,
      value: { kind: "stale_epoch", current: 1 },
    });
    expect(judge(request({ producer: claim(1, 6) }), open, stored)).toEqual({
      ok: true,
      value: { kind: "gap", expected: 4, received: 6 },
    });
    expect(judge(request({ producer: claim(2, 1) }), open, stored)).toMatchObject({
      ok: false,
      code: "invalid_request",
    });
  });

  test("a producer duplicate is recognised before the body and Stream-Seq are looked at", () => {
    const seen = meta({ writerSeq: "z" });
    const retry = request({ producer: claim(1, 3), contentType: "application/json", writerSeq: "a" });
    expect(judge(retry, open, { epoch: 1, lastSeq: 3 }, seen)).toMatchObject({
      ok: true,
      value: { kind: "duplicate" },
    });
  });

  test("a closed stream refuses appends; a retried close by its closer is a duplicate", () => {
    const closer = claim(1, 5);
    const closed: LogState = { ...open, closed: true, closedBy: closer };
    expect(judge(request(), closed)).toEqual({ ok: true, value: { kind: "stream_closed", tail: TAIL } });
    expect(
      judge(request({ producer: closer, close: true, body: new Uint8Array(0) }), closed, { epoch: 1, lastSeq: 5 }),
    ).toEqual({ ok: true, value: { kind: "duplicate", tail: TAIL, closed: true, epoch: 1, lastSeq: 5 } });
    // Closing again without a producer changes nothing and succeeds.
    expect(judge(request({ close: true, body: new Uint8Array(0), contentType: null }), closed)).toEqual({
      ok: true,
      value: { kind: "appended", tail: TAIL, closed: true, producer: null, wrote: false },
    });
  });
});
