import { describe, expect, it } from "vitest";
import { call, createRun, json, KEY_B } from "./helpers.ts";

const MiB = 1024 * 1024;

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
});
