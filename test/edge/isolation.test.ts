import { evictDurableObject, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signToken } from "../../src/auth/tokens.ts";
import { CLOSE_CREDENTIAL } from "../../src/protocol/index.ts";
import { allEvents, call, type CreatedRun, createRun, getRun, json, KEY_B, runObject } from "./helpers.ts";
import { agentEvent, claim, watch } from "./sockets.ts";

/** Every route of a run that an API key may call, as [method, path suffix, body]. */
const RUN_ROUTES: Array<[string, string, unknown]> = [
  ["GET", "", undefined],
  ["GET", "/events", undefined],
  ["POST", "/commands", { commandId: "c1", type: "input", text: "hi" }],
  ["POST", "/approvals/req-1", { decision: "approve" }],
  ["POST", "/cancel", {}],
  ["POST", "/tokens", { role: "viewer", interact: true }],
  ["DELETE", "/tokens", undefined],
  ["DELETE", "/tokens/some-token-id", undefined],
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

/** A run with something to lose: claimed, two events stored, an approval (`req-1`) pending. */
async function liveRun(): Promise<CreatedRun> {
  const created = await createRun();
  const { runner, epoch } = await claim(created.run.id, created.runnerToken);
  const approval = { sourceSeq: 2, type: "approval.requested", data: { requestId: "req-1" } };
  runner.send({ type: "events", epoch, events: [agentEvent(1), approval] });
  await runner.next("ack");
  return created;
}

async function stored(runId: string) {
  return { run: await getRun(runId), events: await allEvents(runId) };
}

/** A token for `runId` signed with the right secret, `overrides` applied to its claims. */
function token(runId: string, overrides: Partial<Parameters<typeof signToken>[1]>): Promise<string> {
  const claims = { tenant: "tenant-a", runId, role: "viewer" as const, interact: true, exp: Date.now() + 60_000 };
  return signToken(env.TOKEN_SECRET, { ...claims, ...overrides });
}

/** Every run route with the method it takes and a body it would accept from a permitted caller. */
const EVERY_ROUTE: Array<[string, string, unknown]> = [
  ...RUN_ROUTES,
  ["GET", "/runner", undefined],
  ["GET", "/watch", undefined],
];

describe("tokens refused wherever they do not belong", () => {
  it.each(EVERY_ROUTE)(
    "a runner token of run X on %s /v1/runs/Y%s is 403 and stores nothing",
    async (method, suffix, body) => {
      const x = await createRun();
      const y = await liveRun();
      const before = await stored(y.run.id);
      const upgrade = suffix === "/runner" || suffix === "/watch" ? { upgrade: "websocket" } : undefined;
      const response = await call(`/v1/runs/${y.run.id}${suffix}`, {
        method,
        key: x.runnerToken,
        ...(upgrade ? { headers: upgrade } : {}),
        ...(body === undefined ? {} : { json: body }),
      });
      expect(response.webSocket ?? null).toBeNull();
      expect(response.status).toBe(403);
      if (method !== "HEAD") expect(((await response.json()) as any).error.code).toBe("forbidden");
      expect(await stored(y.run.id)).toEqual(before);
    },
  );

  it.each([...RUN_ROUTES, ["GET", "/watch", undefined] as [string, string, unknown]])(
    "a runner token on its own run's %s /v1/runs/:id%s is 403 and stores nothing",
    async (method, suffix, body) => {
      const run = await liveRun();
      const before = await stored(run.run.id);
      const response = await call(`/v1/runs/${run.run.id}${suffix}`, {
        method,
        key: run.runnerToken,
        ...(suffix === "/watch" ? { headers: { upgrade: "websocket" } } : {}),
        ...(body === undefined ? {} : { json: body }),
      });
      expect(response.status).toBe(403);
      if (method !== "HEAD") expect(((await response.json()) as any).error.code).toBe("forbidden");
      expect(await stored(run.run.id)).toEqual(before);
    },
  );

  it("a runner token on the tenant's routes (create, list) is 403 and creates nothing", async () => {
    const { runnerToken } = await liveRun();
    const runId = `by-runner-${crypto.randomUUID()}`;
    const created = await call("/v1/runs", { method: "POST", key: runnerToken, json: { runId } });
    expect((await json(created, 403)).error.code).toBe("forbidden");
    expect((await json(await call("/v1/runs", { key: runnerToken }), 403)).error.code).toBe("forbidden");
    expect((await json(await call(`/v1/runs/${runId}`), 404)).error.code).toBe("not_found");
  });

  it.each(EVERY_ROUTE)(
    "an expired interacting viewer token on %s /v1/runs/:id%s is 401 and stores nothing",
    async (method, suffix, body) => {
      const run = await liveRun();
      const expired = await token(run.run.id, { exp: Date.now() - 1 });
      const before = await stored(run.run.id);
      const response = await call(`/v1/runs/${run.run.id}${suffix}`, {
        method,
        key: expired,
        ...(suffix === "/runner" || suffix === "/watch" ? { headers: { upgrade: "websocket" } } : {}),
        ...(body === undefined ? {} : { json: body }),
      });
      expect(response.status).toBe(401);
      if (method !== "HEAD")
        expect(((await response.json()) as any).error).toEqual({ code: "unauthorized", message: "token expired" });
      expect(await stored(run.run.id)).toEqual(before);
    },
  );

  it("an expired runner token cannot look at or attach to its run", async () => {
    const run = await liveRun();
    const expired = await token(run.run.id, { role: "runner", interact: false, exp: Date.now() - 1 });
    const before = await stored(run.run.id);
    expect((await json(await call(`/v1/runs/${run.run.id}/runner`, { key: expired }), 401)).error.code).toBe(
      "unauthorized",
    );
    const upgrade = await call(`/v1/runs/${run.run.id}/runner?token=${expired}`, {
      key: null,
      headers: { upgrade: "websocket" },
    });
    expect(upgrade.webSocket).toBeNull();
    expect(upgrade.status).toBe(401);
    expect(await stored(run.run.id)).toEqual(before);
  });

  it("a viewer token without interact sends commands and approvals over its socket: each refused, nothing stored", async () => {
    const run = await liveRun();
    const viewer = await watch(run.run.id, run.viewerToken);
    await viewer.next("events"); // the replay
    await viewer.next("status");
    const before = await stored(run.run.id);
    const frames = [
      { type: "command", command: { commandId: "v-1", type: "input", text: "let me in" } },
      { type: "command", command: { commandId: "v-2", type: "interrupt" } },
      { type: "command", command: { commandId: "v-3", type: "cancel" } },
      { type: "approval", requestId: "req-1", approval: { decision: "approve" } },
      { type: "approval", requestId: "req-1", approval: { decision: "deny", reason: "no" } },
    ];
    for (const frame of frames) {
      viewer.send(frame);
      expect(await viewer.next("error")).toEqual({
        type: "error",
        code: "forbidden",
        message: "this viewer token cannot send commands",
      });
    }
    expect(viewer.frames.filter((f) => f.type !== "error")).toEqual([]);
    expect(await stored(run.run.id)).toEqual(before);
  });
});

describe("revoked and expired tokens on open sockets", () => {
  const mint = async (runId: string, body: Record<string, unknown>) =>
    json(await call(`/v1/runs/${runId}/tokens`, { method: "POST", json: body }), 201);
  const revoke = async (runId: string, tokenId: string) =>
    json(await call(`/v1/runs/${runId}/tokens/${tokenId}`, { method: "DELETE" }), 200);
  /**
   * The token's stored expiry passes, as time would. The object keeps a live token's stored
   * expiry in memory (a row's expiry never changes once minted), so it is evicted too, its
   * sockets hibernated: the next frame reads the row again.
   */
  const expire = async (runId: string, tokenId: string) => {
    await runInDurableObject(runObject(runId), (_instance, state) => {
      state.storage.sql.exec("UPDATE run_tokens SET expires_at = ? WHERE token_id = ?", Date.now() - 1, tokenId);
    });
    await evictDurableObject(runObject(runId), { webSockets: "hibernate" });
  };

  it("an interacting viewer's socket closes the moment its token is revoked; its approval never lands", async () => {
    const run = await liveRun();
    const operator = await mint(run.run.id, { role: "viewer", interact: true });
    const viewer = await watch(run.run.id, operator.token);
    await viewer.next("status");
    const before = await stored(run.run.id);
    await revoke(run.run.id, operator.tokenId);
    expect((await viewer.waitClosed()).code).toBe(CLOSE_CREDENTIAL);
    expect(await viewer.next("error")).toMatchObject({ code: "token_revoked" });
    expect(await stored(run.run.id)).toEqual(before);
    expect((await getRun(run.run.id)).pendingApprovals.map((a) => a.requestId)).toEqual(["req-1"]);
  });

  it("an interacting viewer whose token expired is refused its next approval and closed; nothing stored", async () => {
    const run = await liveRun();
    const operator = await mint(run.run.id, { role: "viewer", interact: true });
    const viewer = await watch(run.run.id, operator.token);
    await viewer.next("status");
    const before = await stored(run.run.id);
    await expire(run.run.id, operator.tokenId);
    viewer.send({ type: "approval", requestId: "req-1", approval: { decision: "approve" } });
    expect(await viewer.next("error")).toEqual({ type: "error", code: "unauthorized", message: "token expired" });
    expect((await viewer.waitClosed()).code).toBe(CLOSE_CREDENTIAL);
    expect(await stored(run.run.id)).toEqual(before);
  });

  it("a runner whose token is revoked is closed at once and cannot reattach", async () => {
    const created = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const { runner } = await claim(created.run.id, created.runnerToken);
    const run = created;
    const before = await stored(run.run.id);
    await revoke(run.run.id, run.runnerTokenId);
    expect((await runner.waitClosed()).code).toBe(CLOSE_CREDENTIAL);
    const attempt = await call(`/v1/runs/${run.run.id}/runner`, {
      key: run.runnerToken,
      headers: { upgrade: "websocket" },
    });
    expect(attempt.webSocket).toBeNull();
    expect((await json(attempt, 401)).error.code).toBe("token_revoked");
    expect((await stored(run.run.id)).events).toEqual(before.events);
  });

  it("a runner whose token expired on its open socket has its next batch refused, unstored, and is closed", async () => {
    const created = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const { runner, epoch } = await claim(created.run.id, created.runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    await runner.next("ack");
    await expire(created.run.id, created.runnerTokenId);
    runner.send({ type: "events", epoch, events: [agentEvent(2)] });
    expect(await runner.next("error")).toEqual({ type: "error", code: "unauthorized", message: "token expired" });
    expect((await runner.waitClosed()).code).toBe(CLOSE_CREDENTIAL);
    expect((await getRun(created.run.id)).highestSourceSeq).toBe(1);
  });
});
