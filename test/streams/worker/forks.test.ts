import { describe, expect, test } from "vitest";
import { waitFor } from "../../support/wait.ts";
import { send, streamUrl as url } from "./helpers.ts";

/**
 * Stream forks beyond the conformance suite: copies that span several pages, sub-offsets inside
 * one append, concurrent retries of a fork PUT, and tenants.
 */
const auth = (key = "stream-key-a") => ({ authorization: `Bearer ${key}` });
const run = `${Date.now().toString(36)}`;

async function put(path: string, headers: Record<string, string>, body?: BodyInit, key?: string): Promise<Response> {
  return send(url(path), { method: "PUT", headers: { ...auth(key), ...headers }, body: body ?? null });
}

async function readAll(path: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let offset = "-1";
  for (;;) {
    const res = await send(`${url(path)}?offset=${offset}`, { headers: auth() });
    expect(res.status).toBe(200);
    parts.push(new Uint8Array(await res.arrayBuffer()));
    offset = res.headers.get("stream-next-offset") as string;
    if (res.headers.get("stream-up-to-date") === "true") break;
  }
  return Buffer.concat(parts);
}

function bytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

describe("stream forks", () => {
  test("a fork of a multi-megabyte stream copies it byte-exact, with the source's offsets", async () => {
    const src = `big-src-${run}`;
    const first = bytes(1536 * 1024, 1); // stored as two entries
    const created = await put(src, { "content-type": "application/octet-stream" }, first);
    expect(created.status).toBe(201);
    const mid = created.headers.get("stream-next-offset") as string;
    for (const seed of [2, 3]) {
      const res = await send(url(src), {
        method: "POST",
        headers: { ...auth(), "content-type": "application/octet-stream" },
        body: bytes(1024 * 1024, seed),
      });
      expect(res.status).toBe(204);
    }
    const tail = (await send(url(src), { method: "HEAD", headers: auth() })).headers.get("stream-next-offset");

    const fork = await put(`big-fork-${run}`, { "stream-forked-from": `/v1/stream/${src}` });
    expect(fork.status).toBe(201);
    expect(fork.headers.get("stream-next-offset")).toBe(tail);
    expect(Buffer.from(await readAll(`big-fork-${run}`)).equals(Buffer.from(await readAll(src)))).toBe(true);

    // An offset handed out by the source means the same on the fork.
    const fromMid = await send(`${url(`big-fork-${run}`)}?offset=${mid}`, { headers: auth() });
    expect(fromMid.status).toBe(200);
    // (The first page from there starts with the second append, whatever the page size.)
    const afterMid = Buffer.from(await fromMid.arrayBuffer());
    expect(afterMid.subarray(0, 1024 * 1024).equals(Buffer.from(bytes(1024 * 1024, 2)))).toBe(true);

    // A binary sub-offset may reach into the second entry of one large append.
    const sub = await put(`big-sub-${run}`, {
      "stream-forked-from": `/v1/stream/${src}`,
      "stream-fork-offset": "0000000000000000_0000000000000000",
      "stream-fork-sub-offset": String(1200 * 1024),
    });
    expect(sub.status).toBe(201);
    expect(Buffer.from(await readAll(`big-sub-${run}`)).equals(Buffer.from(first.subarray(0, 1200 * 1024)))).toBe(true);
  });

  test("a JSON sub-offset counts messages of one append only", async () => {
    const src = `json-src-${run}`;
    const created = await put(src, { "content-type": "application/json" }, `[{"a":1},{"b":2}]`);
    const afterFirst = created.headers.get("stream-next-offset") as string;
    await send(url(src), {
      method: "POST",
      headers: { ...auth(), "content-type": "application/json" },
      body: `[{"c":3},{"d":4}]`,
    });
    const from = (offset: string, sub: number) => ({
      "stream-forked-from": `/v1/stream/${src}`,
      "stream-fork-offset": offset,
      "stream-fork-sub-offset": String(sub),
    });
    expect((await put(`json-over-${run}`, from("0000000000000000_0000000000000000", 3))).status).toBe(400);
    expect((await put(`json-two-${run}`, from(afterFirst, 1))).status).toBe(201);
    const body = await send(`${url(`json-two-${run}`)}?offset=-1`, { headers: auth() });
    expect(await body.json()).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  test("concurrent retries of one fork PUT create it once and take one reference", async () => {
    const src = `race-src-${run}`;
    await put(src, { "content-type": "text/plain" }, "shared");
    const fork = `race-fork-${run}`;
    const statuses = await Promise.all(
      [1, 2, 3].map(() =>
        put(fork, { "content-type": "text/plain", "stream-forked-from": `/v1/stream/${src}` }).then((r) => r.status),
      ),
    );
    expect(statuses.sort()).toEqual([200, 200, 201]);
    expect(new TextDecoder().decode(await readAll(fork))).toBe("shared");

    expect((await send(url(src), { method: "DELETE", headers: auth() })).status).toBe(204);
    expect((await send(url(src), { method: "HEAD", headers: auth() })).status).toBe(410);
    expect((await send(url(fork), { method: "DELETE", headers: auth() })).status).toBe(204);
    // One reference, released once: the source is fully gone and its path is free again.
    await waitFor(
      "the soft-deleted source to be dropped",
      async () => (await send(url(src), { method: "HEAD", headers: auth() })).status === 404,
      5_000,
    );
    expect((await put(src, { "content-type": "text/plain" })).status).toBe(201);
  });

  test("a plain PUT on a fork's path, or a fork PUT on a plain stream's, is a conflict", async () => {
    const src = `mix-src-${run}`;
    await put(src, { "content-type": "text/plain" }, "x");
    await put(`mix-fork-${run}`, { "stream-forked-from": `/v1/stream/${src}` });
    expect((await put(`mix-fork-${run}`, { "content-type": "text/plain" })).status).toBe(409);
    await put(`mix-plain-${run}`, { "content-type": "text/plain" });
    expect(
      (await put(`mix-plain-${run}`, { "content-type": "text/plain", "stream-forked-from": `/v1/stream/${src}` }))
        .status,
    ).toBe(409);
  });

  test("forks stay within the tenant", async () => {
    await put(`tenant-src-${run}`, { "content-type": "text/plain" }, "a's", "stream-key-a");
    const res = await put(
      `tenant-fork-${run}`,
      { "stream-forked-from": `/v1/stream/tenant-src-${run}` },
      undefined,
      "stream-key-b",
    );
    expect(res.status).toBe(404);
  });
});
