import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createClient, type RunEvent, socketOverFetch, type WatchUpdate } from "../../client/src/index.ts";
import { waitFor } from "../support/wait.ts";
import { allEvents, BASE, createRun, getRun, KEY_A } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

// The SDK's watch inside the Workers runtime, as a Worker calling the edge would run it: its HTTP
// calls through a service binding's fetch (here the worker itself), its sockets from upgrade
// fetches (`new WebSocket(url)` cannot reach a binding). It must yield the stored log exactly,
// across a socket the test closes mid-run, and end with the terminal record.

const worker = (exports as unknown as { default: Fetcher }).default;
const viaWorker = (url: string, init?: RequestInit) => worker.fetch(url, init);

/** The watch, its updates as they come, and every socket it opened (URL and the socket itself). */
function startWatch(runId: string) {
  const client = createClient({ url: BASE, key: KEY_A, fetch: viaWorker as typeof fetch, timeoutMs: 5_000 });
  const upgrade = socketOverFetch(viaWorker);
  const sockets: Array<{ url: string; ws: WebSocket }> = [];
  const updates: WatchUpdate[] = [];
  const done = (async () => {
    const openSocket = async (url: string, headers: Record<string, string> | undefined) => {
      const ws = await upgrade(url, headers);
      sockets.push({ url, ws: ws as unknown as WebSocket });
      return ws;
    };
    for await (const update of client.watch(runId, { openSocket, checkMs: 500 })) updates.push(update);
  })();
  const events = () => updates.flatMap((u): RunEvent[] => (u.type === "event" ? [u.event] : []));
  return { updates, events, sockets, done };
}

describe("watch() inside a Worker, over a service binding", () => {
  it("yields the log exactly once across a socket closed mid-run, resuming from the last seq, then the end record", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const send = async (from: number, count: number) => {
      runner.send({ type: "events", epoch, events: Array.from({ length: count }, (_, i) => agentEvent(from + i)) });
      await runner.next("ack", (f) => f.highestSourceSeq === from + count - 1);
    };
    await send(1, 5);
    const watching = startWatch(run.id);
    const reached = async (what: string) => {
      const { lastSeq } = await getRun(run.id);
      await waitFor(
        `${what}: the watch yielding seq ${lastSeq}`,
        () => (watching.events().at(-1)?.seq ?? 0) >= lastSeq,
        10_000,
      );
      return lastSeq;
    };
    const cutAt = await reached("before the cut");
    expect(watching.sockets).toHaveLength(1);

    // The test closes the watch's socket; the runner goes on while the watch is reconnecting.
    watching.sockets[0]?.ws.close(1000, "cut by the test");
    const dropped = () => watching.updates.some((u) => u.type === "connection" && u.reason !== null);
    await waitFor("the watch reporting its socket closed", dropped, 10_000);
    await send(6, 4);
    await reached("after the cut");
    expect(watching.sockets.map((s) => s.url)).toEqual([
      `${BASE}/v1/runs/${run.id}/watch?after=0`,
      `${BASE}/v1/runs/${run.id}/watch?after=${cutAt}`,
    ]);

    await send(10, 3);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded", exitCode: 0 } });
    await runner.next("completed");
    const ended = await Promise.race([
      watching.done.then(() => "ended"),
      new Promise((resolve) => setTimeout(() => resolve("no end within 10 s"), 10_000)),
    ]);
    expect(ended).toBe("ended");

    const stored = await allEvents(run.id);
    expect(watching.events()).toEqual(stored);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    const connections = watching.updates.filter((u) => u.type === "connection");
    expect(connections).toEqual([
      { type: "connection", reason: "socket closed 1000 cut by the test", lastSeq: cutAt },
      { type: "connection", reason: null, lastSeq: cutAt },
    ]);
    const record = await getRun(run.id);
    expect(record.status).toBe("succeeded");
    expect(watching.updates.at(-1)).toEqual({ type: "end", run: record });
    expect(watching.updates.filter((u) => u.type === "end")).toHaveLength(1);
  });
});
