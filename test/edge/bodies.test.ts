import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/protocol/index.ts";
import { call, createRun, json, KEY_B } from "./helpers.ts";

const MiB = 1024 * 1024;

/** JSON text of arrays nested `depth` levels deep: `[[[…]]]`. */
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/**
 * A chunked body (no Content-Length) of `total` bytes, produced only as the reader pulls it:
 * `produced()` says how much the server asked for.
 */
function chunkedBody(total: number, chunk = 64 * 1024) {
  let produced = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (produced >= total) return controller.close();
        const bytes = new Uint8Array(Math.min(chunk, total - produced)).fill(0x20);
        produced += bytes.byteLength;
        controller.enqueue(bytes);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, produced: () => produced };
}

describe("request bodies", () => {
  it("a chunked body over 1 MiB without Content-Length is 413, and reading stops near the limit", async () => {
    const body = chunkedBody(64 * MiB);
    const response = await call("/v1/runs", { method: "POST", body: body.stream, key: KEY_B });
    expect((await json(response, 413)).error.code).toBe("payload_too_large");
    expect(body.produced()).toBeLessThan(4 * MiB);
  });

  it("a chunked command body over 1 MiB is 413 and stores nothing", async () => {
    const { run } = await createRun();
    const body = chunkedBody(8 * MiB);
    const response = await call(`/v1/runs/${run.id}/commands`, { method: "POST", body: body.stream });
    expect((await json(response, 413)).error.code).toBe("payload_too_large");
    expect(body.produced()).toBeLessThan(4 * MiB);
    expect((await json(await call(`/v1/runs/${run.id}`), 200)).lastSeq).toBe(1);
  });

  it("a chunked body under the limit is read whole", async () => {
    const text = JSON.stringify({ metadata: { note: "x".repeat(300 * 1024) } });
    const bytes = new TextEncoder().encode(text);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.byteLength; at += 64 * 1024) controller.enqueue(bytes.slice(at, at + 64 * 1024));
        controller.close();
      },
    });
    const created = await json(await call("/v1/runs", { method: "POST", body: stream, key: KEY_B }), 201);
    expect(created.run.metadata.note).toHaveLength(300 * 1024);
  });

  it.each([
    ["input", (deep: string) => `{"input":${deep}}`],
    ["metadata", (deep: string) => `{"metadata":{"deep":${deep}}}`],
  ])("a run whose %s nests 3,000 levels (a ~10 KB body) is refused with 422 and not created", async (_field, body) => {
    const runId = `deep-${crypto.randomUUID()}`;
    const text = body(nested(3_000)).replace("{", `{"runId":"${runId}",`);
    expect(text.length).toBeLessThan(10_000);
    const response = await call("/v1/runs", { method: "POST", body: text, key: KEY_B });
    expect((await json(response, 422)).error).toEqual({
      code: "invalid_body",
      message: `JSON may nest at most ${MAX_JSON_DEPTH} levels of arrays and objects`,
    });
    expect((await json(await call(`/v1/runs/${runId}`, { key: KEY_B }), 404)).error.code).toBe("not_found");
  });

  it(`a body nested exactly ${MAX_JSON_DEPTH} levels, the body itself included, is accepted; one more is not`, async () => {
    const atLimit = `{"input":${nested(MAX_JSON_DEPTH - 1)}}`;
    const created = await json(await call("/v1/runs", { method: "POST", body: atLimit, key: KEY_B }), 201);
    expect(JSON.stringify(created.run.input)).toBe(nested(MAX_JSON_DEPTH - 1));
    const overLimit = `{"input":${nested(MAX_JSON_DEPTH)}}`;
    expect((await json(await call("/v1/runs", { method: "POST", body: overLimit, key: KEY_B }), 422)).error.code).toBe(
      "invalid_body",
    );
  });

  it("brackets inside strings do not count as nesting", async () => {
    const body = JSON.stringify({ input: { prompt: `${"[{".repeat(5_000)} " ${"]}".repeat(5_000)}` } });
    expect((await json(await call("/v1/runs", { method: "POST", body, key: KEY_B }), 201)).run.status).toBe("queued");
  });
});
