import { describe, expect, it } from "vitest";
import { call, createRun, getRun, json, KEY_B, uniqueRunId } from "./helpers.ts";
import { connectHost, createPoolRun, dispatcherObject, mintPoolKey, setQueue } from "./pool-helpers.ts";
import { openSocket, SocketProbe } from "./sockets.ts";

const freshQueue = () => `q-${uniqueRunId()}`.toLowerCase();

describe("pool keys stay in their tenant and on the pool socket", () => {
  it("a tenant-B pool host never receives a tenant-A run, even on a queue of the same name", async () => {
    const queue = freshQueue();
    const b = await mintPoolKey(KEY_B);
    const hostB = await connectHost(b.key, { hostId: "host-of-b", slots: 4, queue });
    const { run } = await createPoolRun({ queue });
    await hostB.settle();
    expect(hostB.frames.filter((frame) => frame.type === "assign")).toEqual([]);
    expect((await getRun(run.id)).dispatch?.reason).toBe('no connected pool host serves profile "demo"');
    const poolsOfA = await json(await call("/v1/pools"), 200);
    expect(poolsOfA.hosts.map((host: { hostId: string }) => host.hostId)).not.toContain("host-of-b");
    const keysOfA = await json(await call("/v1/pool-keys"), 200);
    expect(keysOfA.keys.map((entry: { id: string }) => entry.id)).not.toContain(b.id);
    hostB.close();
  });

  it("a pool key is refused on the runs, events, viewer, token and stream routes, and creates nothing", async () => {
    const { key } = await mintPoolKey();
    const { run } = await createRun();
    const refused = [
      ["POST", "/v1/runs", { runId: uniqueRunId("by-pool-key") }],
      ["GET", "/v1/runs", undefined],
      ["GET", `/v1/runs/${run.id}`, undefined],
      ["GET", `/v1/runs/${run.id}/events`, undefined],
      ["POST", `/v1/runs/${run.id}/tokens`, { role: "runner" }],
      ["POST", `/v1/runs/${run.id}/commands`, { commandId: "c", type: "interrupt" }],
      ["GET", `/v1/runs/${run.id}/stream?offset=-1`, undefined],
      ["GET", `/v1/runs/${run.id}/runner`, undefined],
      ["POST", "/v1/pool-keys", {}],
      ["GET", "/v1/pools", undefined],
      ["PUT", "/v1/queues/default", { maxConcurrent: 1 }],
      ["PUT", "/v1/stream/pool-key-test", undefined],
    ] as const;
    for (const [method, path, body] of refused) {
      const response = await call(path, { method, key, ...(body === undefined ? {} : { json: body }) });
      // One credential path (src/auth/credentials.ts): a pool key is refused as one everywhere.
      expect([path, response.status]).toEqual([path, 403]);
    }
    const watch = await call(`/v1/runs/${run.id}/watch?token=${encodeURIComponent(key)}`, {
      headers: { upgrade: "websocket" },
      key: null,
    });
    expect(watch.status).toBe(403);
    expect(
      (await json(await call("/v1/runs?limit=200"), 200)).runs.map((r: { runId: string }) => r.runId),
    ).not.toContain(expect.stringMatching(/^by-pool-key/));
  });

  it("the pool socket takes only a live pool key: API keys, run tokens, forged and revoked keys are refused", async () => {
    const { runnerToken } = await createRun();
    const connect = (key: string | null) => call("/v1/pools/connect", { headers: { upgrade: "websocket" }, key });
    expect((await connect(null)).status).toBe(401);
    expect((await connect("key-a")).status).toBe(403);
    expect((await connect(runnerToken)).status).toBe(403);
    const { id, key } = await mintPoolKey();
    const [prefix, tenant, keyId] = key.split(".");
    expect((await connect(`${prefix}.${tenant}.${keyId}.not-the-secret`)).status).toBe(401);
    const otherTenant = btoa("tenant-b").replaceAll("=", "");
    expect((await connect(key.replace(`.${tenant}.`, `.${otherTenant}.`))).status).toBe(401);

    const host = await connectHost(key, { hostId: "host-revoked", queue: freshQueue() });
    const revoked = await json(await call(`/v1/pool-keys/${id}`, { method: "DELETE" }), 200);
    expect(revoked).toMatchObject({ id, closedSockets: 1 });
    expect((await host.waitClosed()).code).toBe(4003);
    expect((await connect(key)).status).toBe(401);
    const listed = await json(await call("/v1/pool-keys"), 200);
    expect(listed.keys.map((entry: { id: string }) => entry.id)).not.toContain(id);
  });
});

describe("bad pool fields and settings are refused, and store nothing", () => {
  it("create: a bad profile name, queue, recovery or maxRecoveries, pool fields without a profile, a non-string prompt → 422", async () => {
    const bodies = [
      { agent: "Not A Profile" },
      { agent: "" },
      { agent: "demo", queue: "Bad Queue" },
      { agent: "demo", recovery: "sometimes" },
      { agent: "demo", maxRecoveries: -1 },
      { agent: "demo", maxRecoveries: 101 },
      { agent: "demo", maxRecoveries: 1.5 },
      { queue: "default" },
      { agent: { name: "opaque" }, recovery: "auto" },
      { agent: "demo", input: { prompt: 42 } },
      { agent: "demo", input: { prompt: "x".repeat(256 * 1024 + 1) } },
    ];
    for (const body of bodies) {
      const runId = uniqueRunId("refused");
      const response = await call("/v1/runs", { method: "POST", json: { runId, ...body } });
      expect([JSON.stringify(body).slice(0, 80), response.status]).toEqual([JSON.stringify(body).slice(0, 80), 422]);
      expect((await json(response)).error.code).toBe("invalid_body");
      expect((await call(`/v1/runs/${runId}`)).status).toBe(404);
    }
  });

  it("a run without a profile keeps today's flow: no queue, and no pool ever takes it", async () => {
    const queue = "default";
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-default", slots: 2, queue });
    const { run } = await createRun({ agent: { adapter: "codex" }, input: { prompt: "by hand" } });
    expect(run).toMatchObject({
      queue: null,
      recoveryPolicy: null,
      poolHost: null,
      queuePosition: null,
      dispatch: null,
    });
    await host.settle();
    expect(host.frames.filter((frame) => frame.type === "assign" && frame.runId === run.id)).toEqual([]);
    host.close();
  });

  it("queue settings: a bad name 400, bad values 422, and the queue keeps what it had", async () => {
    const queue = freshQueue();
    expect((await setQueue(queue, { maxConcurrent: 2 })).status).toBe(200);
    for (const body of [
      { maxConcurrent: 0 },
      { maxConcurrent: -3 },
      { maxConcurrent: "many" },
      { maxConcurrent: 2, assignMs: 5 },
      { maxConcurrent: 2, extra: true },
      {},
    ]) {
      expect((await setQueue(queue, body)).status).toBe(422);
    }
    expect((await setQueue("UPPER", { maxConcurrent: 1 })).status).toBe(400);
    expect((await setQueue("a".repeat(65), { maxConcurrent: 1 })).status).toBe(400);
    expect(await json(await call(`/v1/queues/${queue}`), 200)).toMatchObject({ maxConcurrent: 2, assignMs: 30_000 });
  });

  it("the pool socket refuses bad frames with error frames and stays open", async () => {
    const { key } = await mintPoolKey();
    const host = await openSocket(`/v1/pools/connect?queue=${freshQueue()}`, null, key);
    host.send({ type: "accepted", assignmentId: "a-1" });
    expect((await host.next("error")).code).toBe("invalid_frame");
    host.send({ type: "hello", hostId: "h", slots: 0, profiles: ["demo"] });
    expect((await host.next("error")).code).toBe("invalid_frame");
    host.send({ type: "hello", hostId: "h", slots: 1, profiles: ["Bad Name"] });
    expect((await host.next("error")).code).toBe("invalid_frame");
    host.send("{not json");
    expect((await host.next("error")).code).toBe("invalid_json");
    host.send({ type: "hello", hostId: "h", slots: 1, profiles: ["demo"] });
    await host.next("welcome");
    host.send({ type: "hello", hostId: "h", slots: 1, profiles: ["demo"] });
    expect((await host.next("error")).code).toBe("invalid_frame");
    host.send({ type: "accepted", assignmentId: "never-assigned" });
    expect((await host.next("error")).code).toBe("stale");
    expect(host.closed).toBeNull();
    host.close();
  });

  it("connect: a bad queue name is 400 before any socket opens", async () => {
    const { key } = await mintPoolKey();
    const response = await call("/v1/pools/connect?queue=Not%20Valid", { headers: { upgrade: "websocket" }, key });
    expect(response.status).toBe(400);
    expect(response.webSocket).toBeNull();
  });
});

describe("a key revoked between the upgrade and hello", () => {
  it("closes the socket at hello instead of welcoming it", async () => {
    const { id, key } = await mintPoolKey();
    const queue = freshQueue();
    (await connectHost(key, { hostId: "first", queue })).close();
    await json(await call(`/v1/pool-keys/${id}`, { method: "DELETE" }), 200);
    // The worker checked the key just before the revocation: the dispatcher gets the socket anyway.
    const headers = { upgrade: "websocket", "x-pool-tenant": "tenant-a", "x-pool-queue": queue, "x-pool-key": id };
    const response = await dispatcherObject(queue).fetch("http://edge.test/v1/pools/connect", { headers });
    const ws = response.webSocket as WebSocket;
    const host = new SocketProbe(ws);
    ws.accept();
    host.send({ type: "hello", hostId: "late-hello", slots: 1, profiles: ["demo"] });
    expect((await host.waitClosed()).code).toBe(4003);
    expect(host.frames.filter((frame) => frame.type === "welcome")).toEqual([]);
  });
});
