import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createRun, json, KEY_B, uniqueRunId } from "./helpers.ts";
import { connectHost, createPoolRun, mintPoolKey, setQueue, takeAssignment } from "./pool-helpers.ts";

const MAX_QUEUES = 100;
const freshQueue = () => `q-${uniqueRunId()}`.toLowerCase();
const queueNames = async (key?: string) =>
  (await json(await call("/v1/queues", key === undefined ? {} : { key }), 200)).queues.map(
    (queue: { name: string }) => queue.name,
  );

describe("queues named by a create", () => {
  it("a refused create records no queue: a conflicting repeat naming a new queue leaves the queue list as it was", async () => {
    const first = await createPoolRun({ queue: freshQueue() });
    const before = await queueNames();
    const refusedQueue = freshQueue();
    const conflict = await call("/v1/runs", {
      method: "POST",
      json: { runId: first.run.id, agent: "demo", input: { prompt: "something else" }, queue: refusedQueue },
    });
    expect((await json(conflict, 409)).error.code).toBe("conflict");
    expect(await queueNames()).toEqual(before);
    expect(await json(await call(`/v1/queues/${refusedQueue}`), 200)).toMatchObject({ depth: 0, running: 0, runs: [] });
  });

  it("a purged run's id is refused without recording the queue its repeat names", async () => {
    const { run } = await createRun({ runId: uniqueRunId() });
    const cancel = await call(`/v1/runs/${run.id}/cancel`, { method: "POST", json: {} });
    expect(cancel.status).toBeLessThan(300);
    expect((await call(`/v1/runs/${run.id}`, { method: "DELETE" })).status).toBe(200);
    const before = await queueNames();
    const refusedQueue = freshQueue();
    const again = await call("/v1/runs", {
      method: "POST",
      json: { runId: run.id, agent: "demo", input: { prompt: "again" }, queue: refusedQueue },
    });
    expect((await json(again, 410)).error.code).toBe("gone");
    expect(await queueNames()).toEqual(before);
  });
});

describe("a tenant at its queue cap", () => {
  it("refuses a new queue in the code of where it was named: body 422 invalid_body, query 400 invalid_query, path 400 invalid_path; nothing stored", async () => {
    // The tenant's queue names filled up to the cap, as that many first uses would leave them.
    await runInDurableObject(env.POOLS.get(env.POOLS.idFromName("tenant-b")), (_instance, state) => {
      const count = () => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM queues").one().n;
      for (let index = count(); index < MAX_QUEUES; index += 1) {
        state.storage.sql.exec("INSERT INTO queues (name, created_at) VALUES (?, ?)", `cap-${index}`, Date.now());
      }
    });
    const full = await queueNames(KEY_B);
    expect(full).toHaveLength(MAX_QUEUES);

    const runId = uniqueRunId();
    const create = await call("/v1/runs", {
      method: "POST",
      key: KEY_B,
      json: { runId, agent: "demo", input: { prompt: "hello" }, queue: "one-too-many" },
    });
    expect((await json(create, 422)).error).toMatchObject({
      code: "invalid_body",
      message: expect.stringMatching(/^queue: /),
    });
    expect((await json(await call(`/v1/runs/${runId}`, { key: KEY_B }), 404)).error.code).toBe("not_found");

    const { key } = await mintPoolKey(KEY_B);
    const socket = await call("/v1/pools/connect?queue=one-too-many", { headers: { upgrade: "websocket" }, key });
    expect((await json(socket, 400)).error.code).toBe("invalid_query");

    const put = await setQueue("one-too-many", { maxConcurrent: 1 }, KEY_B);
    expect((await json(put, 400)).error.code).toBe("invalid_path");
    expect(await queueNames(KEY_B)).toEqual(full);
    // A queue the tenant already has is still usable.
    expect((await setQueue(full[0], { maxConcurrent: 2 }, KEY_B)).status).toBe(200);
  }, 30_000);
});

describe("the run list", () => {
  it("GET /v1/runs shows each pool run's queue, agent and host; a run started by hand has none", async () => {
    const queue = freshQueue();
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "host-listed", slots: 1, queue });
    const held = await createPoolRun({ queue });
    await takeAssignment(host, held.run.id);
    const waiting = await createPoolRun({ queue });
    const byHand = await createRun();
    const page = await json(await call("/v1/runs?limit=20"), 200);
    const rows = new Map(page.runs.map((row: { runId: string }) => [row.runId, row]));
    expect(rows.get(held.run.id)).toMatchObject({ queue, agent: "demo", poolHost: "host-listed" });
    expect(rows.get(waiting.run.id)).toMatchObject({ queue, agent: "demo", poolHost: null });
    expect(rows.get(byHand.run.id)).toMatchObject({ queue: null, poolHost: null });
    host.close();
  });
});
