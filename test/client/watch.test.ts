import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type RunEvent, type RunRecord, type WatchUpdate } from "../../client/src/index.ts";
import { ALPHA, Api } from "../support/api.ts";
import { type AgentEvent, TestRunner } from "../support/runner-client.ts";
import { waitFor } from "../support/wait.ts";
import { type DevServer, startWranglerDev } from "../support/wrangler-dev.ts";
import { type CuttingProxy, startCuttingProxy } from "./support/cutting-proxy.ts";

// The SDK's watch against a real `wrangler dev` behind a proxy that loses a frame, cuts one in
// half, goes silent and outlives a server restart: the watch must yield the stored log exactly,
// element by element, and end with the terminal record.

const CHECK_MS = 700;
let dev: DevServer;
let proxy: CuttingProxy;
let api: Api;

beforeAll(async () => {
  dev = await startWranglerDev();
  proxy = await startCuttingProxy(dev.port);
  api = new Api(dev.url);
});
afterAll(async () => {
  await proxy?.close();
  await dev?.stop();
});

const batch = (name: string, count: number): AgentEvent[] =>
  Array.from({ length: count }, (_, i) => ({ type: "agent.message", data: { text: `${name}-${i}` } }));

interface Watching {
  updates: WatchUpdate[];
  events(): RunEvent[];
  done: Promise<void>;
}

function startWatch(runId: string, signal?: AbortSignal): Watching {
  const client = createClient({ url: proxy.url, key: ALPHA, timeoutMs: 5_000 });
  const updates: WatchUpdate[] = [];
  const done = (async () => {
    for await (const update of client.watch(runId, { checkMs: CHECK_MS, ...(signal ? { signal } : {}) }))
      updates.push(update);
  })();
  const events = () => updates.flatMap((u) => (u.type === "event" ? [u.event] : []));
  return { updates, events, done };
}

async function caughtUp(watching: Watching, runId: string, what: string): Promise<void> {
  const run = await api.getRun(runId);
  await waitFor(
    `${what}: the watch reaching seq ${run.lastSeq}`,
    () => (watching.events().at(-1)?.seq ?? 0) >= run.lastSeq,
    30_000,
  );
}

describe("watch", () => {
  it("yields every event once, in order, across a lost frame, a half frame, a silent socket and a restart", async () => {
    const created = await api.createRun({ agent: "sdk-watch-test" });
    const runId = created.run.id;
    let runner = await TestRunner.connect(dev.url, runId, created.runnerToken);
    const watching = startWatch(runId);
    await runner.send(batch("first", 30));
    await caughtUp(watching, runId, "first batch");

    const lost = proxy.dropFrame("lost-frame-0");
    await runner.send(batch("lost-frame", 1));
    await runner.send(batch("after-lost", 5));
    await caughtUp(watching, runId, "after a lost frame");
    expect(lost.happened(), "the proxy dropped the frame").toBe(true);

    const half = proxy.cutMidFrame("half-frame-0");
    const drops = () => watching.updates.filter((u) => u.type === "connection" && u.reason !== null).length;
    const dropsBefore = drops();
    await runner.send(batch("half-frame", 3));
    await caughtUp(watching, runId, "after a half frame");
    expect(half.happened(), "the proxy cut a frame in half").toBe(true);
    expect(drops(), "the watch saw its socket drop and reconnected").toBeGreaterThan(dropsBefore);

    const silenced = proxy.silence();
    expect(silenced, "a watch socket was open to silence").toBeGreaterThan(0);
    await runner.send(batch("silent", 4));
    await caughtUp(watching, runId, "after a silent socket");
    expect(watching.updates.some((u) => u.type === "connection" && u.reason?.includes("socket stopped"))).toBe(true);

    const epoch = runner.epoch;
    runner.close();
    await dev.restart();
    runner = await TestRunner.connect(dev.url, runId, created.runnerToken, { heldEpoch: epoch });
    await runner.send(batch("restarted", 6));
    await runner.complete({ status: "succeeded" });
    await waitFor(
      "the watch ending with the run's terminal record",
      () => watching.updates.at(-1)?.type === "end",
      60_000,
    );
    await watching.done;

    const stored = await api.events(runId);
    expect(watching.events()).toEqual(stored);
    const end = watching.updates.at(-1) as { type: "end"; run: RunRecord };
    expect(end.run.status).toBe("succeeded");
    expect(end.run.lastSeq).toBe(stored.at(-1)?.seq);
  });

  it("resumes from `after` and ends at once for a finished run; an abort ends a live watch", async () => {
    const created = await api.createRun({ agent: "sdk-watch-test" });
    const runId = created.run.id;
    const runner = await TestRunner.connect(dev.url, runId, created.runnerToken);
    await runner.send(batch("all", 12));
    await runner.complete({ status: "succeeded" });
    const stored = await api.events(runId);
    const client = createClient({ url: proxy.url, key: ALPHA });
    const seen: RunEvent[] = [];
    const after = 5;
    let record: RunRecord | undefined;
    const events = client.watchEvents(runId, { after });
    for (;;) {
      const next = await events.next();
      if (next.done) {
        record = next.value;
        break;
      }
      seen.push(next.value);
    }
    expect(seen).toEqual(stored.filter((e) => e.seq > after));
    expect(record?.status).toBe("succeeded");

    const live = await api.createRun({ agent: "sdk-watch-test" });
    const abort = new AbortController();
    const watching = startWatch(live.run.id, abort.signal);
    const liveRunner = await TestRunner.connect(dev.url, live.run.id, live.runnerToken);
    await liveRunner.send(batch("live", 2));
    await caughtUp(watching, live.run.id, "live run");
    abort.abort();
    await watching.done;
    expect(
      watching.updates.some((u) => u.type === "end"),
      "an aborted watch yields no end",
    ).toBe(false);
    expect(watching.events()).toEqual(await api.events(live.run.id));
    liveRunner.close();
  });
});
