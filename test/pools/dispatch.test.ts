import { describe, expect, it } from "vitest";
import { BETA } from "../support/api.ts";
import { waitFor } from "../support/wait.ts";
import { marker, SCRIPTED, touch, transcript, usePools, writeAgents } from "./harness.ts";

// Runner pools, tests 1 and 6: runs start by themselves on the hosts that dial in, within the
// queue's concurrency limit, and only on hosts of their own tenant that serve their profile.

const t = usePools();

/** Whether a viewer WebSocket with this credential opens (it must not for a pool key). */
function viewerSocketOpens(url: string, credential: string): Promise<boolean> {
  type Ctor = new (url: string, init: { headers: Record<string, string> }) => WebSocket;
  const ws = new (WebSocket as unknown as Ctor)(url.replace(/^http/, "ws"), {
    headers: { authorization: `Bearer ${credential}` },
  });
  return new Promise((resolve) => {
    ws.addEventListener("open", () => {
      ws.close();
      resolve(true);
    });
    ws.addEventListener("error", () => resolve(false));
    ws.addEventListener("close", () => resolve(false));
  });
}

/** The most runs held at once, from each run's first claim to its end, as the stored events date them. */
function mostAtOnce(spans: { from: number; to: number }[]): number {
  const edges = spans.flatMap((s) => [
    { at: s.from, delta: 1 },
    { at: s.to, delta: -1 },
  ]);
  // An end and a start at the same millisecond: the end first (the slot was free by then).
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let most = 0;
  for (const edge of edges) {
    now += edge.delta;
    most = Math.max(most, now);
  }
  return most;
}

describe("dispatch", () => {
  it("6 runs on two 2-slot hosts with maxConcurrent 3: all succeed exactly, never more than 3 at once", async () => {
    const queue = "limited";
    const limit = await t.api.request("PUT", `/v1/queues/${queue}`, { maxConcurrent: 3 });
    expect(limit.status).toBe(200);
    const { key } = await t.poolKey();
    const a = t.host({ key, queue, slots: 2 });
    const b = t.host({ key, queue, slots: 2 });
    await Promise.all([a.hostId(), b.hostId()]);

    const go = marker("go");
    const runIds: string[] = [];
    for (let i = 1; i <= 6; i++) {
      runIds.push(
        await t.createRun([{ out: `run ${i} started` }, { waitFile: go }, { out: `run ${i} done` }], { queue }),
      );
    }
    // Three run, the other three wait in order with their positions on their records.
    const placed = await waitFor(
      "three runs running and three queued",
      async () => {
        const runs = await Promise.all(runIds.map((id) => t.api.getRun(id)));
        const running = runs.filter((r) => r.status === "running");
        return running.length === 3 && runs.filter((r) => r.status === "queued").length === 3 ? runs : null;
      },
      60_000,
    );
    const waiting = placed.filter((r) => r.status === "queued") as unknown as { queuePosition: number | null }[];
    expect(waiting.map((r) => r.queuePosition)).toEqual([1, 2, 3]);
    expect(placed.slice(0, 3).every((r) => r.status === "running")).toBe(true); // oldest first
    const queueInfo = await t.api.ok("GET", `/v1/queues/${queue}`);
    expect(queueInfo).toMatchObject({ name: queue, maxConcurrent: 3, depth: 3, running: 3, hosts: 2 });

    touch(go);
    for (const id of runIds) await t.api.waitForStatus(id, "succeeded", 90_000);

    const spans: { from: number; to: number }[] = [];
    for (const [i, id] of runIds.entries()) {
      const { events, runnerRows, texts, control } = await transcript(t.api, id);
      expect(runnerRows).toEqual([
        [1, 1, "TEXT_MESSAGE_CHUNK"],
        [1, 2, "TEXT_MESSAGE_CHUNK"],
      ]);
      expect(texts).toEqual([`run ${i + 1} started\n`, `run ${i + 1} done\n`]);
      expect(control).toEqual(["run.created", "run.claimed", "run.finished"]);
      const time = (type: string) => Date.parse(events.find((e) => e.type === type)?.time as string);
      spans.push({ from: time("run.claimed"), to: time("run.finished") });
      const record = (await t.api.getRun(id)) as unknown as Record<string, unknown>;
      expect(record).toMatchObject({ queue, agent: "scripted", queuePosition: null, epoch: 1 });
    }
    expect(mostAtOnce(spans)).toBe(3);
    // Both hosts took work, and every run was accepted exactly once.
    expect([...a.accepted(), ...b.accepted()].sort()).toEqual([...runIds].sort());
    expect(a.accepted().length).toBeGreaterThan(0);
    expect(b.accepted().length).toBeGreaterThan(0);
  });
});

describe("isolation", () => {
  it("a pool key of tenant B never gets tenant A's runs, and opens nothing but the pool socket", async () => {
    const beta = await t.poolKey(BETA);
    const betaHost = t.host({ key: beta.key });
    await betaHost.hostId();
    const runId = await t.createRun([{ out: "alpha's work" }]);
    const stuck = await waitFor("tenant A's run to say why it waits", async () => {
      const run = (await t.api.getRun(runId)) as unknown as {
        status: string;
        dispatch: { reason: string | null } | null;
      };
      return run.dispatch?.reason ? run : null;
    });
    expect(stuck.status).toBe("queued");
    expect(stuck.dispatch?.reason).toMatch(/scripted/);

    // The pool key as any other credential: refused everywhere but the pool socket.
    const asPool = (method: string, route: string, body?: unknown) => t.api.request(method, route, body, beta.key);
    for (const [method, route, body] of [
      ["GET", `/v1/runs/${runId}`],
      ["GET", `/v1/runs/${runId}/events`],
      ["GET", "/v1/runs"],
      ["POST", "/v1/runs", { agent: "scripted" }],
      ["POST", `/v1/runs/${runId}/tokens`, { role: "viewer" }],
      ["GET", "/v1/pool-keys"],
      ["GET", "/v1/queues"],
    ] as [string, string, unknown?][]) {
      const res = await asPool(method, route, body);
      expect([401, 403], `${method} ${route} with a pool key answered ${res.status}`).toContain(res.status);
    }
    const stream = await fetch(`${t.edge.url}/v1/runs/${runId}/stream?offset=-1`, {
      headers: { authorization: `Bearer ${beta.key}` },
    });
    expect([401, 403]).toContain(stream.status);
    expect(await viewerSocketOpens(`${t.edge.url}/v1/runs/${runId}/watch`, beta.key)).toBe(false);

    // Tenant A's own host takes it at once.
    const alpha = await t.poolKey();
    const alphaHost = t.host({ key: alpha.key });
    await t.api.waitForStatus(runId, "succeeded", 60_000);
    expect(alphaHost.accepted()).toEqual([runId]);
    expect(betaHost.accepted()).toEqual([]);
    expect((await transcript(t.api, runId)).texts).toEqual(["alpha's work\n"]);
  });

  it("a run naming a profile no host serves stays queued with the reason on its record", async () => {
    const { key } = await t.poolKey();
    const host = t.host({ key });
    await host.hostId();
    const res = await t.api.request("POST", "/v1/runs", { agent: "nobody-serves-this", input: { prompt: "hi" } });
    expect(res.status).toBe(201);
    const runId = (res.body as { run: { id: string } }).run.id;
    const run = await waitFor("the run's record to name why it waits", async () => {
      const r = (await t.api.getRun(runId)) as unknown as {
        status: string;
        dispatch: { reason: string | null } | null;
      };
      return r.dispatch?.reason ? r : null;
    });
    expect(run.status).toBe("queued");
    expect(run.dispatch?.reason).toMatch(/nobody-serves-this/);
    expect(host.accepted()).toEqual([]);
  });

  it("bad profile names and queue settings are 4xx and store nothing", async () => {
    const before = await t.api.ok("GET", "/v1/runs?limit=100");
    for (const agent of ["Codex!", "", "a".repeat(65), "../x"]) {
      const res = await t.api.request("POST", "/v1/runs", { agent, input: { prompt: "x" } });
      expect(res.status, `agent ${JSON.stringify(agent)}`).toBe(422);
      expect(res.body).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
    }
    const bad = await t.api.request("POST", "/v1/runs", { agent: "scripted", queue: "Not A Queue" });
    expect(bad.status).toBe(422);
    expect(await t.api.ok("GET", "/v1/runs?limit=100")).toEqual(before);

    const set = await t.api.request("PUT", "/v1/queues/settings-test", { maxConcurrent: 2 });
    expect(set.status).toBe(200);
    for (const body of [{ maxConcurrent: 0 }, { maxConcurrent: -1 }, { maxConcurrent: "3" }, { limit: 3 }, {}]) {
      const res = await t.api.request("PUT", "/v1/queues/settings-test", body);
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    expect((await t.api.request("PUT", "/v1/queues/Bad Name", { maxConcurrent: 2 })).status).toBeGreaterThanOrEqual(
      400,
    );
    expect(await t.api.ok("GET", "/v1/queues/settings-test")).toMatchObject({ maxConcurrent: 2 });
  });
});

describe("the agent's sandbox on a pool host", () => {
  it("by default in the OS sandbox: the pool's directories out of sight, no network; a profile may say none", async () => {
    const { sandbox: _none, ...sandboxed } = SCRIPTED;
    const agents = writeAgents({ scripted: sandboxed, plain: SCRIPTED });
    const { key } = await t.poolKey();
    const host = t.host({ key, agents });
    await host.hostId();
    const steps = [{ probe: "../bridge.log" }, { connect: t.edge.port }, { out: "done" }];
    const inside = await t.createRun(steps);
    const outside = await t.createRun(steps, { agent: "plain" });
    for (const id of [inside, outside]) {
      const ended = await waitFor(
        `run ${id} to end`,
        async () => {
          const run = await t.api.getRun(id);
          return run.finishedAt ? run : null;
        },
        60_000,
      );
      expect(ended.outcome).toEqual({ status: "succeeded", exitCode: 0 });
    }
    const seen = async (id: string) =>
      (await t.api.runnerEvents(id)).filter((e) => e.type === "CUSTOM").map((e) => e.data);
    expect(await seen(inside)).toEqual([
      { name: "probe", value: { path: "../bridge.log", exists: false } },
      { name: "connect", value: { port: t.edge.port, connected: false } },
    ]);
    expect(await seen(outside)).toEqual([
      { name: "probe", value: { path: "../bridge.log", exists: true } },
      { name: "connect", value: { port: t.edge.port, connected: true } },
    ]);
    expect(host.output()).toMatch(
      new RegExp(`\\[${inside}\\] runner-bridge: launched .* in a sandbox \\(network none`),
    );
  });
});
