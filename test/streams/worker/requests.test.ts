import { describe, expect, test } from "vitest";
import { waitFor } from "../../support/wait.ts";
import { bearer, errorCode, send, streamUrl as url } from "./helpers.ts";

/** How generic streams refuse requests they cannot take: the API's error codes, CORS kept. */
const auth = bearer("stream-key-a");
const MiB = 1024 * 1024;
const LIMIT = 16 * MiB;

/** A chunked body (no Content-Length) that sends `bytes` and then stays open without ending. */
function endlessBody(bytes: number): { body: ReadableStream<Uint8Array>; sent: () => number } {
  let sent = 0;
  const chunk = new Uint8Array(MiB).fill(120);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= bytes) return new Promise<void>(() => {}); // never ends
      controller.enqueue(chunk);
      sent += chunk.byteLength;
    },
  });
  return { body, sent: () => sent };
}

describe("stream request refusals", () => {
  test("a method streams do not have is 405 method_not_allowed, with Allow and CORS headers", async () => {
    const res = await send(url("refusal-method"), { method: "PATCH", headers: auth });
    expect(res.status).toBe(405);
    expect(await errorCode(res)).toBe("method_not_allowed");
    expect(res.headers.get("allow")).toBe("GET, HEAD, PUT, POST, DELETE, OPTIONS");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  test.each(["PUT", "POST"])(
    "a %s body without Content-Length is refused once it passes 16 MiB, without waiting for its end",
    async (method) => {
      const path = `refusal-chunked-${method.toLowerCase()}`;
      if (method === "POST") {
        const created = await send(url(path), { method: "PUT", headers: { ...auth, "content-type": "text/plain" } });
        expect(created.status).toBe(201);
      }
      const { body, sent } = endlessBody(LIMIT + 2 * MiB);
      let answer: Response | null = null;
      void send(url(path), { method, headers: { ...auth, "content-type": "text/plain" }, body }).then(
        (res) => (answer = res),
      );
      const res = await waitFor("a 413 while the body is still open", () => answer, 10_000);
      expect(res.status).toBe(413);
      expect(await errorCode(res)).toBe("payload_too_large");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(sent()).toBeGreaterThan(LIMIT);

      // Nothing was stored: the PUT created no stream, the POST appended nothing.
      const read = await send(`${url(path)}?offset=-1`, { headers: auth });
      if (method === "PUT") expect(read.status).toBe(404);
      else expect(await read.text()).toBe("");
    },
    30_000,
  );
});
