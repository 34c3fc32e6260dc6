import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signToken } from "../../src/auth/tokens.ts";
import { CLOSE_CREDENTIAL, RUN_TOKENS_LIVE_MAX } from "../../src/protocol/index.ts";
import worker from "../../src/worker.ts";
import { allEvents, call, createRun, DAY, getRun, json, runObject, uniqueRunId } from "./helpers.ts";
import { claim, watch } from "./sockets.ts";

const mint = async (runId: string, body: Record<string, unknown>) =>
  json(await call(`/v1/runs/${runId}/tokens`, { method: "POST", json: body }), 201);
const revoke = (runId: string, tokenId?: string) =>
  call(`/v1/runs/${runId}/tokens${tokenId === undefined ? "" : `/${tokenId}`}`, { method: "DELETE" });
const command = (runId: string, key: string, commandId = "c-1") =>
  call(`/v1/runs/${runId}/commands`, { method: "POST", key, json: { commandId, type: "input", text: "hi" } });

/** A token signed the way tokens were before they had ids. */
function legacyToken(runId: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const claims = { tenant: "tenant-a", runId, role: "viewer", interact: false, exp: Date.now() + DAY };
  return signToken(env.TOKEN_SECRET, { ...claims, ...overrides } as never);
}

describe("every minted token has an id", () => {
  it("create and POST /tokens answer each token with its tokenId; the ids are distinct", async () => {
    const created = await createRun();
    expect(created).toMatchObject({ runnerTokenId: expect.any(String), viewerTokenId: expect.any(String) });
    const minted = await mint(created.run.id, { role: "viewer", interact: true });
    expect(minted).toMatchObject({ role: "viewer", interact: true, tokenId: expect.any(String) });
    expect(Date.parse(minted.expiresAt) - Date.now()).toBeGreaterThan(DAY - 60_000);
    expect(new Set([created.runnerTokenId, created.viewerTokenId, minted.tokenId]).size).toBe(3);
  });
});

describe("revoking one token", () => {
  it("DELETE /tokens/:tokenId ends that token at once and no other", async () => {
    const created = await createRun();
    const runId = created.run.id;
    const operator = await mint(runId, { role: "viewer", interact: true });
    const answer = await json(await revoke(runId, operator.tokenId), 200);
    expect(answer).toMatchObject({ tokenId: operator.tokenId, revokedAt: expect.any(String) });
    const refused = await json(await call(`/v1/runs/${runId}`, { key: operator.token }), 401);
    expect(refused.error.code).toBe("token_revoked");
    expect((await json(await command(runId, operator.token), 401)).error.code).toBe("token_revoked");
    expect((await json(await call(`/v1/runs/${runId}`, { key: created.viewerToken }), 200)).id).toBe(runId);
    // Revoking again says the same; an id the run never minted is 404.
    expect((await json(await revoke(runId, operator.tokenId), 200)).revokedAt).toBe(answer.revokedAt);
    expect((await json(await revoke(runId, "no-such-token"), 404)).error.code).toBe("not_found");
    expect((await allEvents(runId)).map((e) => e.type)).toEqual(["run.created"]);
  });
});

describe("a write checks its token in the write's own transaction", () => {
  it("a token revoked after the request's first check still cannot command, cancel, approve or recover", async () => {
    const created = await createRun();
    const runId = created.run.id;
    const operator = await mint(runId, { role: "viewer", interact: true });
    // What the route passes on after its own check let the request through.
    const presented = { tokenId: operator.tokenId as string, exp: Date.parse(operator.expiresAt) };
    await json(await revoke(runId, operator.tokenId), 200);
    const run = runObject(runId);
    const refusals = [
      await run.command({ commandId: "late-1", type: "input", text: "hi" }, presented),
      await run.cancel({ commandId: "late-2" }, presented),
      await run.approve("req-1", { decision: "approve" }, presented),
      await run.recover({ action: "fail", commandId: "late-3" }, presented),
    ];
    expect(refusals.map((r) => (r.ok ? "accepted" : r.code))).toEqual(Array(4).fill("token_revoked"));
    expect((await getRun(runId)).status).toBe("queued");
    expect((await allEvents(runId)).map((e) => e.type)).toEqual(["run.created"]);
    // The same calls with an API key's null token act as before.
    expect((await run.cancel({ commandId: "by-key" }, null)).ok).toBe(true);
  });
});

describe("revoking all of a run's tokens", () => {
  it("DELETE /tokens ends every token of the run, those minted before ids included; the key still works", async () => {
    const created = await createRun();
    const runId = created.run.id;
    const legacy = await legacyToken(runId);
    expect((await json(await call(`/v1/runs/${runId}`, { key: legacy }), 200)).id).toBe(runId);
    const answer = await json(await revoke(runId), 200);
    expect(answer).toMatchObject({ revoked: 2, revokedAt: expect.any(String) });
    for (const token of [created.viewerToken, legacy]) {
      expect((await json(await call(`/v1/runs/${runId}`, { key: token }), 401)).error.code).toBe("token_revoked");
    }
    const preflight = await call(`/v1/runs/${runId}/runner`, { key: created.runnerToken });
    expect((await json(preflight, 401)).error.code).toBe("token_revoked");
    expect((await getRun(runId)).status).toBe("queued");
    // Tokens minted afterwards work.
    const fresh = await mint(runId, { role: "viewer" });
    expect((await json(await call(`/v1/runs/${runId}`, { key: fresh.token }), 200)).id).toBe(runId);
  });

  it("closes every token socket of the run at once", async () => {
    const created = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const { runner } = await claim(created.run.id, created.runnerToken);
    const viewer = await watch(created.run.id, created.viewerToken);
    await viewer.next("status");
    await json(await revoke(created.run.id), 200);
    expect((await viewer.waitClosed()).code).toBe(CLOSE_CREDENTIAL);
    expect((await runner.waitClosed()).code).toBe(CLOSE_CREDENTIAL);
  });

  it("purging a run revokes its tokens", async () => {
    const created = await createRun();
    const runId = created.run.id;
    await json(await call(`/v1/runs/${runId}/cancel`, { method: "POST", json: {} }), 202);
    await json(await call(`/v1/runs/${runId}`, { method: "DELETE" }), 200);
    const read = await call(`/v1/runs/${runId}`, { key: created.viewerToken });
    expect((await json(read, 401)).error.code).toBe("token_revoked");
    expect((await json(await call(`/v1/runs/${runId}`), 410)).error.code).toBe("gone");
  });
});

describe("interacting tokens live a bounded time", () => {
  it("an interacting token longer than 7 days is refused at minting; 7 days is the default maximum", async () => {
    const { run } = await createRun();
    const tooLong = await call(`/v1/runs/${run.id}/tokens`, {
      method: "POST",
      json: { role: "viewer", interact: true, ttlMs: 7 * DAY + 1 },
    });
    expect((await json(tooLong, 422)).error.code).toBe("invalid_body");
    expect((await mint(run.id, { role: "viewer", interact: true, ttlMs: 7 * DAY })).interact).toBe(true);
    // A read-only viewer token may still live longer.
    expect((await mint(run.id, { role: "viewer", ttlMs: 30 * DAY })).interact).toBe(false);
  });

  it("a year-long interacting token from before the bound reads but no longer acts", async () => {
    const { run } = await createRun();
    const old = await legacyToken(run.id, { interact: true, exp: Date.now() + 365 * DAY });
    expect((await json(await call(`/v1/runs/${run.id}`, { key: old }), 200)).id).toBe(run.id);
    const refused = await json(await command(run.id, old), 403);
    expect(refused.error).toEqual({
      code: "forbidden",
      message: "this token outlives the 604800000 ms interacting tokens may live; mint a new one",
    });
  });
});

describe("a tenant whose API keys are gone", () => {
  // The same deployment with tenant-c's key, then after it was removed from API_KEYS.
  const withKey = { ...env, API_KEYS: `${env.API_KEYS},key-c=tenant-c` };
  const withoutKey = { ...env };
  async function send(deployment: typeof env, path: string, key: string, init: RequestInit = {}) {
    const ctx = createExecutionContext();
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const response = await worker.fetch(new Request(`http://edge.test${path}`, { ...init, headers }), deployment, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }

  it("its tokens stop working and no new one is minted", async () => {
    const runId = uniqueRunId("gone-tenant");
    const created = await json(
      await send(withKey, "/v1/runs", "key-c", { method: "POST", body: JSON.stringify({ runId }) }),
      201,
    );
    expect((await json(await send(withKey, `/v1/runs/${runId}`, created.viewerToken), 200)).id).toBe(runId);
    const refused = await json(await send(withoutKey, `/v1/runs/${runId}`, created.viewerToken), 401);
    expect(refused.error).toEqual({ code: "unauthorized", message: "the token's tenant has no API key any more" });
    const minting = await send(withoutKey, `/v1/runs/${runId}/tokens`, "key-c", {
      method: "POST",
      body: JSON.stringify({ role: "viewer" }),
    });
    expect(minting.status).toBe(401);
  });
});

describe("?token= takes only viewer tokens", () => {
  it("an API key in ?token= is refused on every route that reads the query", async () => {
    const { run } = await createRun();
    for (const suffix of ["/watch", "/stream?offset=-1", "/runner"]) {
      const path = `/v1/runs/${run.id}${suffix}${suffix.includes("?") ? "&" : "?"}token=key-a`;
      const response = await call(path, { key: null, headers: { upgrade: "websocket" } });
      expect(response.webSocket ?? null).toBeNull();
      expect((await json(response, 401)).error.code).toBe("unauthorized");
    }
  });

  it("a runner token in ?token= is refused; in the Authorization header it attaches", async () => {
    const { run, runnerToken } = await createRun();
    const inQuery = await call(`/v1/runs/${run.id}/runner?token=${runnerToken}`, {
      key: null,
      headers: { upgrade: "websocket" },
    });
    expect(inQuery.webSocket ?? null).toBeNull();
    expect((await json(inQuery, 401)).error.message).toBe(
      "?token= takes only viewer tokens; send API keys and runner tokens as Authorization: Bearer",
    );
    const inHeader = await call(`/v1/runs/${run.id}/runner`, { key: runnerToken });
    expect((await json(inHeader, 200)).status).toBe("queued");
    expect((await getRun(run.id)).epoch).toBe(0);
  });

  it("a viewer token in ?token= opens the watch socket and reads the run stream", async () => {
    const { run, viewerToken } = await createRun();
    const viewer = await watch(run.id, viewerToken);
    expect((await viewer.next("events")).events.map((e: { type: string }) => e.type)).toEqual(["run.created"]);
    const stream = await call(`/v1/runs/${run.id}/stream?offset=-1&token=${viewerToken}`, { key: null });
    expect(stream.status).toBe(200);
    await stream.body?.cancel();
  });
});

describe("a run's token records are bounded", () => {
  it(`past ${RUN_TOKENS_LIVE_MAX} unexpired tokens minting is refused 429 until the run's tokens are revoked`, async () => {
    const { run } = await createRun();
    // Two tokens from the create; fill the rest as minting would have.
    await runInDurableObject(runObject(run.id), (_instance, state) => {
      const later = Date.now() + DAY;
      for (let i = 2; i < RUN_TOKENS_LIVE_MAX - 1; i++) {
        state.storage.sql.exec(
          "INSERT INTO run_tokens (token_id, role, interact, created_at, expires_at) VALUES (?, 'viewer', 0, ?, ?)",
          `filler-${i}`,
          Date.now(),
          later,
        );
      }
    });
    const last = await mint(run.id, { role: "viewer" });
    const refused = await call(`/v1/runs/${run.id}/tokens`, { method: "POST", json: { role: "viewer" } });
    expect((await json(refused, 429)).error.code).toBe("too_many_tokens");
    expect((await json(await call(`/v1/runs/${run.id}`, { key: last.token }), 200)).id).toBe(run.id);
    expect((await json(await revoke(run.id), 200)).revoked).toBe(RUN_TOKENS_LIVE_MAX);
    expect((await mint(run.id, { role: "viewer" })).role).toBe("viewer");
  });
});
