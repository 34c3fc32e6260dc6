import { describe, expect, it } from "vitest";
import { CLOSE_RECONNECT, type RunEvent } from "../../src/protocol/index.ts";
import { allEvents, call, createRun, json } from "./helpers.ts";
import { EDGE_LIMITS } from "./limits.ts";
import { agentEvent, claim, type SocketProbe, watch } from "./sockets.ts";

const KiB = 1024;
/** One event of about `bytes` of JSON: a frame carries one (frames are at most 1 MiB). */
const bigEvent = (sourceSeq: number, bytes = 700 * KiB) =>
  agentEvent(sourceSeq, "TOOL_CALL_RESULT", { content: `${sourceSeq}:${"x".repeat(bytes)}` });
/** The most one read may carry: the byte bound, plus the one event that crosses it. */
const PAGE_CEILING = EDGE_LIMITS.pageBytes + 800 * KiB;

/** A running run whose log holds `count` big events (sourceSeq 1..count). */
async function runWithBigLog(count: number, bytes?: number) {
  const created = await createRun({ timeouts: { heartbeatMs: 600_000 } });
  const session = await claim(created.run.id, created.runnerToken);
  for (let n = 1; n <= count; n++) {
    session.runner.send({ type: "events", epoch: session.epoch, events: [bigEvent(n, bytes)] });
    await session.runner.next("ack", (f) => f.highestSourceSeq === n);
  }
  return { ...created, ...session };
}

/** Sizes of the raw frames a socket receives, and an ack of the last seq after each events frame. */
function acking(viewer: SocketProbe, ack = true): number[] {
  const sizes: number[] = [];
  viewer.ws.addEventListener("message", (event) => {
    const text = String(event.data);
    sizes.push(text.length);
    const frame = JSON.parse(text) as { type: string; events?: RunEvent[] };
    const last = frame.events?.at(-1);
    if (ack && last) viewer.send({ type: "ack", seq: last.seq });
  });
  return sizes;
}

const received = (viewer: SocketProbe) =>
  viewer.frames.filter((f) => f.type === "events").flatMap((f) => f.events as RunEvent[]);

async function finish(runner: SocketProbe, epoch: number) {
  runner.send({ type: "complete", epoch, outcome: { status: "succeeded", exitCode: 0 } });
  await runner.next("completed");
}

describe("bounded reads", () => {
  it("GET /events bounds a page in bytes as well as in count; paging on reads the whole log", async () => {
    const { run } = await runWithBigLog(4);
    const response = await call(`/v1/runs/${run.id}/events?after=0&limit=500`);
    const text = await response.clone().text();
    const page = await json<{ events: RunEvent[]; hasMore: boolean; nextAfter: number }>(response, 200);
    expect(text.length).toBeLessThanOrEqual(PAGE_CEILING);
    expect(page.hasMore).toBe(true);
    expect(page.events.map((e) => e.seq)).toEqual(page.events.map((_, i) => i + 1));
    expect(page.nextAfter).toBe(page.events.at(-1)?.seq);
    const all = await allEvents(run.id);
    expect(all.filter((e) => e.source === "runner").map((e) => e.sourceSeq)).toEqual([1, 2, 3, 4]);
  });

  it("the watch replay goes out in frames bounded in bytes, then live, each event exactly once", async () => {
    const { run, runner, epoch, viewerToken } = await runWithBigLog(4);
    const viewer = await watch(run.id, viewerToken, 0);
    const sizes = acking(viewer);
    await viewer.next("status", () => true, 15_000);
    runner.send({ type: "events", epoch, events: [agentEvent(5)] });
    await runner.next("ack", (f) => f.highestSourceSeq === 5);
    await finish(runner, epoch);
    await viewer.next("end", () => true, 15_000);
    expect(received(viewer)).toEqual(await allEvents(run.id));
    expect(sizes.length).toBeGreaterThan(3);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(PAGE_CEILING);
    expect((await viewer.waitClosed()).code).toBe(1000);
  });

  it("events appended while a replay is held for acks reach the viewer once, in order, with no gap", async () => {
    const { run, runner, epoch, viewerToken } = await runWithBigLog(0);
    // 4,000 events of ~700 B: frames of 500, a yield after each READ_PAGE_MAX_BYTES of them.
    for (let batch = 0; batch < 8; batch++) {
      const events = Array.from({ length: 500 }, (_, i) =>
        agentEvent(batch * 500 + i + 1, "T", { d: "x".repeat(600) }),
      );
      runner.send({ type: "events", epoch, events });
      await runner.next("ack", (f) => f.highestSourceSeq === (batch + 1) * 500);
    }
    const viewer = await watch(run.id, viewerToken, 0);
    let acking = false;
    viewer.ws.addEventListener("message", (event) => {
      const last = (JSON.parse(String(event.data)) as { events?: RunEvent[] }).events?.at(-1);
      if (acking && last) viewer.send({ type: "ack", seq: last.seq });
    });
    // The replay stops a backlog in, waiting for an ack; meanwhile the runner appends.
    const deadline = Date.now() + 5_000;
    while (received(viewer).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    for (let n = 4001; n <= 4040; n++) {
      runner.send({ type: "events", epoch, events: [agentEvent(n)] });
      await runner.next("ack", (f) => f.highestSourceSeq === n);
    }
    const held = received(viewer);
    expect(held.length).toBeGreaterThan(0);
    expect(held.length).toBeLessThan(4000);
    expect(viewer.frames.some((f) => f.type === "status")).toBe(false);
    acking = true;
    viewer.send({ type: "ack", seq: held.at(-1)?.seq ?? 0 });
    await viewer.next("status", () => true, 15_000);
    await finish(runner, epoch);
    await viewer.next("end", () => true, 15_000);
    expect(received(viewer)).toEqual(await allEvents(run.id));
  }, 30_000);

  it("viewers attaching from a cursor while the runner streams see the log after it exactly once", async () => {
    const { run, runner, epoch, viewerToken } = await runWithBigLog(0);
    for (let batch = 0; batch < 6; batch++) {
      const events = Array.from({ length: 500 }, (_, i) =>
        agentEvent(batch * 500 + i + 1, "T", { d: "x".repeat(600) }),
      );
      runner.send({ type: "events", epoch, events });
      await runner.next("ack", (f) => f.highestSourceSeq === (batch + 1) * 500);
    }
    const viewers: SocketProbe[] = [];
    for (const after of [0, 1234]) {
      const viewer = await watch(run.id, viewerToken, after);
      acking(viewer);
      viewers.push(viewer);
    }
    for (let n = 3001; n <= 3040; n++) {
      runner.send({ type: "events", epoch, events: [agentEvent(n)] });
      await runner.next("ack", (f) => f.highestSourceSeq === n);
    }
    await finish(runner, epoch);
    const stored = await allEvents(run.id);
    for (const viewer of viewers) await viewer.next("end", () => true, 15_000);
    expect(received(viewers[0] as SocketProbe)).toEqual(stored);
    expect(received(viewers[1] as SocketProbe)).toEqual(stored.filter((e) => e.seq > 1234));
  }, 30_000);

  it("a viewer that does not ack its replay is closed to reconnect, and reconnecting from its last seq completes it", async () => {
    const { run, runner, epoch, viewerToken } = await runWithBigLog(7);
    const silent = await watch(run.id, viewerToken, 0);
    const closed = await silent.waitClosed(20_000);
    expect(closed.code).toBe(CLOSE_RECONNECT);
    expect(silent.frames.filter((f) => f.type === "error").map((f) => f.code)).toEqual(["viewer_behind"]);
    const first = received(silent);
    expect(first.length).toBeGreaterThan(0);
    expect(first.map((e) => e.seq)).toEqual(first.map((_, i) => i + 1));
    const sentBytes = first.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
    expect(sentBytes).toBeLessThanOrEqual(EDGE_LIMITS.viewerBacklogBytes + PAGE_CEILING);
    const again = await watch(run.id, viewerToken, first.at(-1)?.seq ?? 0);
    acking(again);
    await finish(runner, epoch);
    await again.next("end", () => true, 15_000);
    expect([...first, ...received(again)]).toEqual(await allEvents(run.id));
  }, 30_000);

  it("a live viewer whose unacknowledged backlog passes the bound is closed with 4008; one that acks is not", async () => {
    const { run, runner, epoch, viewerToken } = await runWithBigLog(0);
    const silent = await watch(run.id, viewerToken, 0);
    const steady = await watch(run.id, viewerToken, 0);
    acking(silent, false);
    acking(steady);
    await silent.next("status");
    await steady.next("status");
    for (let n = 1; n <= 6; n++) {
      runner.send({ type: "events", epoch, events: [bigEvent(n)] });
      await runner.next("ack", (f) => f.highestSourceSeq === n);
      await steady.next("events", (f) => f.events.some((e: RunEvent) => e.sourceSeq === n));
    }
    expect((await silent.waitClosed()).code).toBe(CLOSE_RECONNECT);
    expect(silent.frames.filter((f) => f.type === "error").map((f) => f.code)).toEqual(["viewer_behind"]);
    const prefix = received(silent);
    expect(prefix).toEqual((await allEvents(run.id)).slice(0, prefix.length));
    await finish(runner, epoch);
    await steady.next("end");
    expect((await steady.waitClosed()).code).toBe(1000);
  });

  it("a run takes at most VIEWERS_PER_RUN_MAX viewers; the next is refused 429 too_many_viewers", async () => {
    const { run, viewerToken } = await createRun();
    const viewers: SocketProbe[] = [];
    for (let i = 0; i < EDGE_LIMITS.viewers; i++) viewers.push(await watch(run.id, viewerToken, 0));
    const upgrade = { headers: { upgrade: "websocket" }, key: null };
    const refused = await call(`/v1/runs/${run.id}/watch?token=${viewerToken}`, upgrade);
    expect(refused.webSocket).toBeNull();
    expect((await json(refused, 429)).error.code).toBe("too_many_viewers");
    viewers[0]?.close();
    // Once the object has seen that close, a seat is free again.
    let admitted = false;
    const deadline = Date.now() + 5_000;
    while (!admitted && Date.now() < deadline) {
      const response = await call(`/v1/runs/${run.id}/watch?token=${viewerToken}`, upgrade);
      admitted = response.webSocket !== null;
      if (response.webSocket) response.webSocket.accept();
      else await response.text();
    }
    expect(admitted, "a viewer admitted within 5 s of one closing").toBe(true);
    for (const viewer of viewers) viewer.close();
  });
});
