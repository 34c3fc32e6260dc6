import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CLOSE_CREDENTIAL } from "../../src/protocol/index.ts";
import { call, createRun, DAY, getRun, json, runObject } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

// The object keeps its tokens' verdicts in memory (src/run/token-store.ts TokenVerdicts): a
// socket's token is checked on every frame without reading storage. These show every revocation
// still ends a token at its next check, once its live verdict was remembered.

const presented = (minted: { tokenId: string; expiresAt: string }) => ({
  tokenId: minted.tokenId,
  exp: Date.parse(minted.expiresAt),
});
const mint = async (runId: string, body: Record<string, unknown>) =>
  json(await call(`/v1/runs/${runId}/tokens`, { method: "POST", json: body }), 201);
const verdict = async (runId: string, token: { tokenId: string | null; exp: number }) => {
  const result = await runObject(runId).checkToken(token);
  return result.ok ? "ok" : result.code;
};

describe("a remembered live token is refused at its next check once revoked", () => {
  it("one token revoked: that one refused, the others still live", async () => {
    const created = await createRun();
    const runId = created.run.id;
    const operator = await mint(runId, { role: "viewer", interact: true });
    const viewer = await mint(runId, { role: "viewer" });
    expect([await verdict(runId, presented(operator)), await verdict(runId, presented(viewer))]).toEqual(["ok", "ok"]);
    await json(await call(`/v1/runs/${runId}/tokens/${operator.tokenId}`, { method: "DELETE" }), 200);
    expect(await verdict(runId, presented(operator))).toBe("token_revoked");
    expect(await verdict(runId, presented(viewer))).toBe("ok");
  });

  it("all tokens revoked: ones with ids and ones from before ids, both remembered live, are refused", async () => {
    const created = await createRun();
    const runId = created.run.id;
    const viewer = await mint(runId, { role: "viewer" });
    const legacy = { tokenId: null, exp: Date.now() + DAY };
    expect([await verdict(runId, presented(viewer)), await verdict(runId, legacy)]).toEqual(["ok", "ok"]);
    await json(await call(`/v1/runs/${runId}/tokens`, { method: "DELETE" }), 200);
    expect([await verdict(runId, presented(viewer)), await verdict(runId, legacy)]).toEqual([
      "token_revoked",
      "token_revoked",
    ]);
  });

  it("an assignment taken back: its runner token is refused", async () => {
    const created = await createRun();
    const runId = created.run.id;
    const runner = { tokenId: created.runnerTokenId as string, exp: Date.now() + DAY };
    expect(await verdict(runId, runner)).toBe("ok");
    const taken = await runObject(runId).takeBackAssignment(runner.tokenId);
    expect(taken).toEqual({ ok: true, value: "taken_back" });
    expect(await verdict(runId, runner)).toBe("token_revoked");
  });

  it("a purge: every token of the run is refused", async () => {
    const created = await createRun();
    const runId = created.run.id;
    const viewer = await mint(runId, { role: "viewer" });
    expect((await json(await call(`/v1/runs/${runId}`, { key: viewer.token }), 200)).id).toBe(runId);
    await json(await call(`/v1/runs/${runId}/cancel`, { method: "POST", json: {} }), 202);
    await json(await call(`/v1/runs/${runId}`, { method: "DELETE" }), 200);
    expect(await verdict(runId, presented(viewer))).toBe("token_revoked");
    expect((await json(await call(`/v1/runs/${runId}`, { key: viewer.token }), 401)).error.code).toBe("token_revoked");
  });

  it("expiry is judged by the clock at every check, the remembered row's and the token's own", async () => {
    const created = await createRun();
    const runId = created.run.id;
    const viewer = await mint(runId, { role: "viewer" });
    expect(await verdict(runId, presented(viewer))).toBe("ok");
    // The same id presented with a passed expiry (the row's is later): expired, not remembered as live.
    expect(await verdict(runId, { tokenId: viewer.tokenId, exp: Date.now() - 1 })).toBe("unauthorized");
    expect(await verdict(runId, { tokenId: null, exp: Date.now() - 1 })).toBe("unauthorized");
    expect(await verdict(runId, { tokenId: null, exp: Date.now() + DAY })).toBe("ok");
    expect(await verdict(runId, { tokenId: "never-minted", exp: Date.now() + DAY })).toBe("token_revoked");
  });
});

describe("a runner socket's frames after its token is revoked", () => {
  it("revoking all tokens ends the runner token its frames had remembered live; nothing more is stored", async () => {
    const created = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const runId = created.run.id;
    const { runner, epoch } = await claim(runId, created.runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    await runner.next("ack");
    // The object's own RPC, as DELETE /tokens reaches it.
    await runInDurableObject(runObject(runId), async (instance) => {
      const object = instance as unknown as { revokeAllTokens(): Promise<unknown> };
      await object.revokeAllTokens();
    });
    expect(await verdict(runId, { tokenId: created.runnerTokenId as string, exp: Date.now() + DAY })).toBe(
      "token_revoked",
    );
    expect((await runner.waitClosed()).code).toBe(CLOSE_CREDENTIAL);
    expect((await getRun(runId)).highestSourceSeq).toBe(1);
  });
});
