import { describe, expect, test } from "vitest";
import { BASE, bearer, send, streamUrl as url } from "./helpers.ts";

/** Stream auth in the Workers runtime with the default configuration (no anonymous access). */

describe("stream auth", () => {
  test("without credentials streams answer 401 unless ALLOW_ANONYMOUS_STREAMS=true", async () => {
    const res = await send(url("auth-anon"), { method: "PUT", headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("an unknown key is 401, a run token is 403", async () => {
    expect((await send(url("auth-x"), { headers: bearer("nope") })).status).toBe(401);
    expect((await send(url("auth-x"), { headers: bearer("rt1.abc.def") })).status).toBe(403);
  });

  test("streams belong to the key's tenant", async () => {
    const created = await send(url("auth-shared-name"), {
      method: "PUT",
      headers: { ...bearer("stream-key-a"), "content-type": "text/plain" },
      body: "a's data",
    });
    expect(created.status).toBe(201);
    const own = await send(url("auth-shared-name"), { headers: bearer("stream-key-a") });
    expect(await own.text()).toBe("a's data");
    // Same path, other tenant: a different stream, which does not exist yet.
    expect((await send(url("auth-shared-name"), { headers: bearer("stream-key-b") })).status).toBe(404);
    const theirs = await send(url("auth-shared-name"), {
      method: "PUT",
      headers: { ...bearer("stream-key-b"), "content-type": "application/json" },
    });
    expect(theirs.status).toBe(201);
    expect((await send(url("auth-shared-name"), { headers: bearer("stream-key-a") })).headers.get("content-type")).toBe(
      "text/plain",
    );
  });

  test("CORS preflights need no credentials", async () => {
    const res = await send(url("auth-preflight"), {
      method: "OPTIONS",
      headers: {
        origin: "https://example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, producer-id",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("producer-id");
  });

  test("other /v1 routes keep their API-key middleware", async () => {
    expect((await send(`${BASE}/v1/runs`)).status).toBe(401);
  });
});
