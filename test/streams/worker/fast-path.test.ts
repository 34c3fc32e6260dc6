import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import worker from "../../../src/worker.ts";
import { bearer, streamUrl } from "./helpers.ts";

type Via = "worker" | "app";

/** One request answered by the worker (appends and catch-up reads skip the router) or by the app's routes. */
async function send(via: Via, url: string, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(url, init);
  const response = await (via === "worker" ? worker.fetch(request, env, ctx) : worker.app.fetch(request, env, ctx));
  await waitOnExecutionContext(ctx);
  return response;
}

/** Status, every header (sorted) and body, with the stream's own id and path made alike. */
async function answer(response: Response, path: string): Promise<unknown> {
  const unify = (text: string) => text.replaceAll(path, "<path>").replaceAll(/"[0-9a-f-]{36}:/g, '"<id>:');
  return {
    status: response.status,
    headers: [...response.headers].map(([name, value]) => [name, unify(value)]).sort(),
    body: unify(await response.text()),
  };
}

const json = { "content-type": "application/json", ...bearer("stream-key-a") };

/** The same requests on two fresh streams, one sent each way; their answers, request by request. */
async function both(requests: (path: string) => [string, RequestInit][]): Promise<Record<Via, unknown[]>> {
  const answers: Record<Via, unknown[]> = { worker: [], app: [] };
  for (const via of ["worker", "app"] as const) {
    const path = `fast-path-${via}-${crypto.randomUUID()}`;
    for (const [url, init] of requests(path)) answers[via].push(await answer(await send(via, url, init), path));
  }
  return answers;
}

describe("appends and catch-up reads answered ahead of the router", () => {
  test("answer exactly as the app's routes do: writes, reads, producers and every refusal", async () => {
    const { worker: fast, app } = await both((path) => {
      const url = streamUrl(path);
      const producer = { "producer-id": "p", "producer-epoch": "0" };
      return [
        [url, { method: "PUT", headers: json }],
        [url, { method: "POST", headers: json, body: '[{"a":1},{"b":2}]' }],
        [url, { method: "POST", headers: { ...json, ...producer, "producer-seq": "0" }, body: '{"c":3}' }],
        // A producer's retry, a gap, bad JSON, no content type, an empty body: each refused or judged alike.
        [url, { method: "POST", headers: { ...json, ...producer, "producer-seq": "0" }, body: '{"c":3}' }],
        [url, { method: "POST", headers: { ...json, ...producer, "producer-seq": "5" }, body: '{"d":4}' }],
        [url, { method: "POST", headers: json, body: "{not json" }],
        [url, { method: "POST", headers: bearer("stream-key-a"), body: "x" }],
        [url, { method: "POST", headers: json, body: "" }],
        [url, { headers: bearer("stream-key-a") }],
        [`${url}?offset=-1`, { headers: bearer("stream-key-a") }],
        [`${url}?offset=not-an-offset`, { headers: bearer("stream-key-a") }],
        [`${url}?offset=-1`, { headers: bearer("wrong-key") }],
        [streamUrl(`${path}-missing`), { method: "POST", headers: json, body: "[1]" }],
        [streamUrl(`${path}-missing`), { headers: bearer("stream-key-a") }],
      ];
    });
    expect(fast).toEqual(app);
    // The requests did what they say: three messages stored, read back whole.
    expect((fast[9] as { status: number; body: string }).body).toBe('[{"a":1},{"b":2},{"c":3}]');
  });
});
