import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signToken } from "../../src/auth/tokens.ts";
import { allEvents, call, createRun, getRun, json, KEY_B } from "./helpers.ts";

/** Every route of a run that an API key may call, as [method, path suffix, body]. */
const RUN_ROUTES: Array<[string, string, unknown]> = [
  ["GET", "", undefined],
  ["GET", "/events", undefined],
  ["POST", "/commands", { commandId: "c1", type: "input", text: "hi" }],
  ["POST", "/approvals/req-1", { decision: "approve" }],
  ["POST", "/cancel", {}],
  ["POST", "/tokens", { role: "viewer", interact: true }],
  ["DELETE", "", undefined],
  ["GET", "/stream?offset=-1", undefined],
  ["HEAD", "/stream", undefined],
];

describe("tenant isolation", () => {
  it.each(RUN_ROUTES)(
    "another tenant's key on %s /v1/runs/:id%s is 404 and changes nothing",
    async (method, suffix, body) => {
      const { run } = await createRun();
      const before = { run: await getRun(run.id), events: await allEvents(run.id) };
      const response = await call(`/v1/runs/${run.id}${suffix}`, {
        method,
        key: KEY_B,
        ...(body === undefined ? {} : { json: body }),
      });
      expect(response.status).toBe(404);
      if (method !== "HEAD") expect(((await response.json()) as any).error.code).toBe("not_found");
      expect({ run: await getRun(run.id), events: await allEvents(run.id) }).toEqual(before);
    },
  );

  it("another tenant's key on the watch socket is 404 before any upgrade", async () => {
    const { run } = await createRun();
    const response = await call(`/v1/runs/${run.id}/watch`, { key: KEY_B, headers: { upgrade: "websocket" } });
    expect(response.webSocket).toBeNull();
    expect((await json(response, 404)).error.code).toBe("not_found");
  });

  it("a token signed for another tenant's run of the same id reaches nothing of this tenant's", async () => {
    const { run } = await createRun();
    const foreign = await signToken(env.TOKEN_SECRET, {
      tenant: "tenant-b",
      runId: run.id,
      role: "viewer",
      interact: true,
      exp: Date.now() + 60_000,
    });
    expect((await json(await call(`/v1/runs/${run.id}`, { key: foreign }), 404)).error.code).toBe("not_found");
  });
});

describe("run tokens stay in their run and role", () => {
  it("a runner token of one run cannot attach to another", async () => {
    const x = await createRun();
    const y = await createRun();
    const preflight = await call(`/v1/runs/${y.run.id}/runner`, { key: x.runnerToken });
    expect((await json(preflight, 403)).error.code).toBe("forbidden");
    const upgrade = await call(`/v1/runs/${y.run.id}/runner`, {
      key: x.runnerToken,
      headers: { upgrade: "websocket" },
    });
    expect(upgrade.webSocket).toBeNull();
    expect(upgrade.status).toBe(403);
    expect((await getRun(y.run.id)).epoch).toBe(0);
  });

  it.each(RUN_ROUTES.filter(([method]) => method !== "GET" && method !== "HEAD"))(
    "a viewer token without interact on %s /v1/runs/:id%s is 403 and changes nothing",
    async (method, suffix, body) => {
      const { run, viewerToken } = await createRun();
      const before = await allEvents(run.id);
      const response = await call(`/v1/runs/${run.id}${suffix}`, {
        method,
        key: viewerToken,
        ...(body === undefined ? {} : { json: body }),
      });
      expect((await json(response, 403)).error.code).toBe("forbidden");
      expect(await allEvents(run.id)).toEqual(before);
    },
  );
});
