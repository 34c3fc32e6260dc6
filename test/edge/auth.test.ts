import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signToken } from "../../src/auth/tokens.ts";
import { call, createRun, json, KEY_B } from "./helpers.ts";
import { connectRunner, openSocket } from "./sockets.ts";

describe("API keys", () => {
  it("a request without credentials or with an unknown key is 401", async () => {
    expect((await json(await call("/v1/runs", { key: null }), 401)).error.code).toBe("unauthorized");
    expect((await json(await call("/v1/runs", { key: "nope" }), 401)).error.code).toBe("unauthorized");
  });

  it("another tenant's run does not exist for you", async () => {
    const { run } = await createRun({}, KEY_B);
    expect((await json(await call(`/v1/runs/${run.id}`), 404)).error.code).toBe("not_found");
    expect((await json(await call(`/v1/runs/${run.id}/cancel`, { method: "POST" }), 404)).error.code).toBe("not_found");
    expect((await json(await call(`/v1/runs/${run.id}`, { key: KEY_B }), 200)).status).toBe("queued");
  });
});

describe("run tokens", () => {
  it("a runner token cannot call the API", async () => {
    const { run, runnerToken } = await createRun();
    expect((await json(await call(`/v1/runs/${run.id}`, { key: runnerToken }), 403)).error.code).toBe("forbidden");
    expect((await json(await call(`/v1/runs/${run.id}/events`, { key: runnerToken }), 403)).error.code).toBe(
      "forbidden",
    );
    expect((await json(await call("/v1/runs", { method: "POST", json: {}, key: runnerToken }), 403)).error.code).toBe(
      "forbidden",
    );
    const commands = await call(`/v1/runs/${run.id}/commands`, {
      method: "POST",
      json: { commandId: "c", type: "interrupt" },
      key: runnerToken,
    });
    expect((await json(commands, 403)).error.code).toBe("forbidden");
  });

  it("a viewer token reads the run and its events", async () => {
    const { run, viewerToken } = await createRun();
    expect((await json(await call(`/v1/runs/${run.id}`, { key: viewerToken }), 200)).id).toBe(run.id);
    expect((await json(await call(`/v1/runs/${run.id}/events`, { key: viewerToken }), 200)).events).toHaveLength(1);
  });

  it("a viewer token cannot send commands or delete the run", async () => {
    const { run, viewerToken } = await createRun();
    const denied = await call(`/v1/runs/${run.id}/commands`, {
      method: "POST",
      json: { commandId: "c", type: "interrupt" },
      key: viewerToken,
    });
    expect((await json(denied, 403)).error.code).toBe("forbidden");
    expect((await json(await call(`/v1/runs/${run.id}`, { method: "DELETE", key: viewerToken }), 403)).error.code).toBe(
      "forbidden",
    );
    expect((await json(await call(`/v1/runs/${run.id}/events`), 200)).events).toHaveLength(1);
  });

  it("a viewer token minted with interact sends commands, but mints no tokens", async () => {
    const { run } = await createRun();
    const minted = await json(
      await call(`/v1/runs/${run.id}/tokens`, { method: "POST", json: { role: "viewer", interact: true } }),
      201,
    );
    const allowed = await call(`/v1/runs/${run.id}/commands`, {
      method: "POST",
      json: { commandId: "c", type: "interrupt" },
      key: minted.token,
    });
    expect((await json(allowed, 201)).command.commandId).toBe("c");
    const noMinting = await call(`/v1/runs/${run.id}/tokens`, {
      method: "POST",
      json: { role: "viewer" },
      key: minted.token,
    });
    expect((await json(noMinting, 403)).error.code).toBe("forbidden");
  });

  it("a viewer token for one run cannot read another", async () => {
    const first = await createRun();
    const second = await createRun();
    expect((await json(await call(`/v1/runs/${second.run.id}`, { key: first.viewerToken }), 403)).error.code).toBe(
      "forbidden",
    );
  });

  it("a viewer token cannot attach as a runner, nor a runner token as a viewer", async () => {
    const { run, runnerToken, viewerToken } = await createRun();
    const asRunner = await call(`/v1/runs/${run.id}/runner?token=${viewerToken}`, {
      headers: { upgrade: "websocket" },
      key: null,
    });
    expect(asRunner.status).toBe(403);
    const asViewer = await call(`/v1/runs/${run.id}/watch`, { headers: { upgrade: "websocket" }, key: runnerToken });
    expect(asViewer.status).toBe(403);
    // In the query a runner token is refused before its role is weighed.
    const inQuery = await call(`/v1/runs/${run.id}/watch?token=${runnerToken}`, {
      headers: { upgrade: "websocket" },
      key: null,
    });
    expect(inQuery.status).toBe(401);
    const apiKeyAsRunner = await call(`/v1/runs/${run.id}/runner`, { headers: { upgrade: "websocket" } });
    expect(apiKeyAsRunner.status).toBe(403);
  });

  it("expired, tampered and foreign-secret tokens are 401", async () => {
    const { run } = await createRun();
    const claims = { tenant: "tenant-a", runId: run.id, role: "viewer" as const, interact: false };
    const expired = await signToken(env.TOKEN_SECRET, { ...claims, exp: Date.now() - 1 });
    expect((await json(await call(`/v1/runs/${run.id}`, { key: expired }), 401)).error.message).toBe("token expired");
    const valid = await signToken(env.TOKEN_SECRET, { ...claims, exp: Date.now() + 60_000 });
    const [prefix, body, signature] = valid.split(".");
    const tampered = `${prefix}.${body}.${signature?.startsWith("A") ? "B" : "A"}${signature?.slice(1)}`;
    expect((await json(await call(`/v1/runs/${run.id}`, { key: tampered }), 401)).error.message).toBe("invalid token");
    const forged = await signToken("some-other-secret", { ...claims, interact: true, exp: Date.now() + 60_000 });
    expect((await json(await call(`/v1/runs/${run.id}`, { key: forged }), 401)).error.code).toBe("unauthorized");
    const expiredSocket = await call(`/v1/runs/${run.id}/watch?token=${expired}`, {
      headers: { upgrade: "websocket" },
      key: null,
    });
    expect(expiredSocket.status).toBe(401);
  });

  it.each([
    ["a segment whose base64 length is 1 mod 4", "rt1.abcde.x"],
    ["a segment that is not base64url", "rt1.ab$cd.efgh"],
    ["a missing signature", "rt1.abcd"],
    ["an extra segment", "rt1.abcd.efgh.ijkl"],
  ])("a token with %s is 401 unauthorized", async (_name, token) => {
    const { run } = await createRun();
    const response = await call(`/v1/runs/${run.id}`, { key: token });
    expect(await json(response, 401)).toEqual({ error: { code: "unauthorized", message: "invalid token" } });
  });

  it("a correctly signed token whose claims are not run claims is 401", async () => {
    const { run } = await createRun();
    const notClaims = await signToken(env.TOKEN_SECRET, null as never);
    expect((await json(await call(`/v1/runs/${run.id}`, { key: notClaims }), 401)).error.code).toBe("unauthorized");
  });

  it("a minted token carries the requested lifetime", async () => {
    const { run } = await createRun();
    const before = Date.now();
    const minted = await json(
      await call(`/v1/runs/${run.id}/tokens`, { method: "POST", json: { role: "runner", ttlMs: 5_000 } }),
      201,
    );
    const after = Date.now();
    const claims = JSON.parse(atob(minted.token.split(".")[1].replaceAll("-", "+").replaceAll("_", "/")));
    expect(claims).toMatchObject({ tenant: "tenant-a", runId: run.id, role: "runner", interact: false });
    expect(claims.exp).toBeGreaterThanOrEqual(before + 5_000);
    expect(claims.exp).toBeLessThanOrEqual(after + 5_000);
    const runner = await connectRunner(run.id, minted.token);
    runner.send({ type: "hello", runnerId: "short-lived" });
    expect((await runner.next("claimed")).epoch).toBe(1);
  });

  it("socket routes take the token from the query string; API routes do not", async () => {
    const { run, viewerToken } = await createRun();
    const viewer = await openSocket(`/v1/runs/${run.id}/watch`, viewerToken);
    expect(await viewer.next("status")).toEqual({ type: "status", status: "queued" });
    expect((await json(await call(`/v1/runs/${run.id}?token=${viewerToken}`, { key: null }), 401)).error.code).toBe(
      "unauthorized",
    );
  });
});
