import { describe, expect, test } from "vitest";
import { bearer, send, streamUrl as url } from "./helpers.ts";

/** Expiry far past any date an alarm can hold: the stream is made, kept and read, never a 500. */
const auth = bearer("stream-key-a");

describe("streams whose expiry lies beyond the alarm clock", () => {
  test.each([
    ["the largest Stream-TTL", { "Stream-TTL": String(Number.MAX_SAFE_INTEGER) }],
    ["a Stream-Expires-At in year 9999", { "Stream-Expires-At": "9999-12-31T23:59:59Z" }],
  ])("%s creates a stream that takes appends and reads back", async (_name, expiry) => {
    const path = `far-expiry-${Object.keys(expiry)[0]!.toLowerCase()}`;
    const created = await send(url(path), {
      method: "PUT",
      headers: { ...auth, "content-type": "text/plain", ...expiry },
    });
    expect(created.status).toBe(201);
    const appended = await send(url(path), {
      method: "POST",
      headers: { ...auth, "content-type": "text/plain" },
      body: "kept",
    });
    expect(appended.status).toBe(204);
    const read = await send(url(path), { headers: auth });
    expect(read.status).toBe(200);
    expect(await read.text()).toBe("kept");
  });

  test("the largest Stream-TTL with Stream-Closed is made closed, not refused with a 500", async () => {
    const created = await send(url("far-expiry-closed"), {
      method: "PUT",
      headers: {
        ...auth,
        "content-type": "text/plain",
        "Stream-TTL": String(Number.MAX_SAFE_INTEGER),
        "Stream-Closed": "true",
      },
    });
    expect(created.status).toBe(201);
    const head = await send(url("far-expiry-closed"), { method: "HEAD", headers: auth });
    expect(head.status).toBe(200);
    expect(head.headers.get("stream-ttl")).toBe(String(Number.MAX_SAFE_INTEGER));
  });
});
