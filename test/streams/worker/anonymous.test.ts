import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import worker from "../../../src/worker.ts";
import { bearer, streamUrl as url } from "./helpers.ts";

// A deployment with anonymous streams on and a real tenant whose name is "anonymous".
const deployment = { ...env, API_KEYS: "named-anonymous-key=anonymous", ALLOW_ANONYMOUS_STREAMS: "true" };

async function send(path: string, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url(path), init), deployment, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe("the anonymous streams tenant", () => {
  test("is not the tenant named `anonymous`: the same path is two streams", async () => {
    const path = `anon-collide-${crypto.randomUUID()}`;
    const anonymous = await send(path, { method: "PUT", headers: { "content-type": "text/plain" }, body: "anon" });
    expect(anonymous.status).toBe(201);
    // The keyed tenant does not see the anonymous stream, and creates its own.
    expect((await send(path, { headers: bearer("named-anonymous-key") })).status).toBe(404);
    const keyed = await send(path, {
      method: "PUT",
      headers: { ...bearer("named-anonymous-key"), "content-type": "text/plain" },
      body: "tenant",
    });
    expect(keyed.status).toBe(201);
    expect(await (await send(path)).text()).toBe("anon");
    expect(await (await send(path, { headers: bearer("named-anonymous-key") })).text()).toBe("tenant");
  });
});
