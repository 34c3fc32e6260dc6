import { fail, type Result, STREAM_HEADERS as H } from "../protocol/index.ts";
import { streamFailure, streamResponse } from "./http.ts";
import { infoHeaders } from "./read-responses.ts";
import type { AppendVerdict, Created } from "./stream-api.ts";

/** The HTTP answers to PUT and POST, from StreamObject's results (PROTOCOL §5.1, §5.2). */

/** PUT: 201 with Location for a new stream, 200 when it already existed as described. */
export function createResponse(result: Result<Created>, location: string): Response {
  if (!result.ok) return streamFailure(result);
  const { kind, info } = result.value;
  if (kind === "created") return streamResponse(201, { ...infoHeaders(info), location });
  return streamResponse(200, infoHeaders(info));
}

/** POST: 204 (200 for a producer's new write), or a refusal with the protocol's headers. */
export function appendResponse(result: Result<AppendVerdict>): Response {
  if (!result.ok) return streamFailure(result);
  const verdict = result.value;
  switch (verdict.kind) {
    case "appended": {
      const headers: Record<string, string> = { [H.nextOffset]: verdict.tail };
      if (verdict.closed) headers[H.closed] = "true";
      if (verdict.producer) {
        headers[H.producerEpoch] = String(verdict.producer.epoch);
        headers[H.producerSeq] = String(verdict.producer.seq);
      }
      return streamResponse(verdict.producer && verdict.wrote ? 200 : 204, headers);
    }
    case "duplicate": {
      const headers: Record<string, string> = {
        [H.nextOffset]: verdict.tail,
        [H.producerEpoch]: String(verdict.epoch),
        [H.producerSeq]: String(verdict.lastSeq),
      };
      if (verdict.closed) headers[H.closed] = "true";
      return streamResponse(204, headers);
    }
    case "stale_epoch":
      return streamFailure(fail("forbidden", "a newer producer epoch owns this Producer-Id"), {
        [H.producerEpoch]: String(verdict.current),
      });
    case "gap":
      return streamFailure(fail("conflict", `producer sequence gap: expected ${verdict.expected}`), {
        [H.producerExpectedSeq]: String(verdict.expected),
        [H.producerReceivedSeq]: String(verdict.received),
      });
    case "stream_closed":
      return streamFailure(fail("conflict", "the stream is closed"), {
        [H.closed]: "true",
        [H.nextOffset]: verdict.tail,
      });
  }
}
