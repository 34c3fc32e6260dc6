import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { allEvents, call, createRun, json, uniqueRunId } from "./helpers.ts";
import { agentEvent, claim, type SocketProbe, watch } from "./sockets.ts";

/** Everything a viewer saw until `end`, with the close code. Bounded by the probe's waits. */
async function transcriptUntilEnd(
  viewer: SocketProbe,
): Promise<{ events: RunEvent[]; end: string; closeCode: number }> {
  const end = await viewer.next("end", () => true, 15_000);
  const events = viewer.frames.filter((f) => f.type === "events").flatMap((f) => f.events as RunEvent[]);
  const { code } = await viewer.waitClosed();
  return { events, end: end.status, closeCode: code };
}

async function finish(runner: SocketProbe, epoch: number) {
  runner.send({ type: "complete", epoch, outcome: { status: "succeeded", exitCode: 0 } });
  await runner.next("completed");
}

describe("viewers", () => {
  it("replay from a cursor, then live, each event exactly once, then end and close 1000", async () => {
    const { run, runnerToken, viewerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [1, 2, 3].map((n) => agentEvent(n)) });
    await runner.next("ack");
    const fromStart = await watch(run.id, viewerToken, 0);
    const fromMiddle = await watch(run.id, viewerToken, 3);
    expect(await fromStart.next("status")).toEqual({ type: "status", status: "running" });
    runner.send({ type: "events", epoch, events: [4, 5].map((n) => agentEvent(n)) });
    await runner.next("ack");
    await finish(runner, epoch);
    const stored = await allEvents(run.id);
    const seenFromStart = await transcriptUntilEnd(fromStart);
    expect(seenFromStart).toEqual({ events: stored, end: "succeeded", closeCode: 1000 });
    const seenFromMiddle = await transcriptUntilEnd(fromMiddle);
    expect(seenFromMiddle.events).toEqual(stored.filter((e) => e.seq > 3));
  });

  it("viewers attaching while a runner streams see the stored log with no gap and no repeat", async () => {
    const { run, runnerToken, viewerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const viewers: Promise<SocketProbe>[] = [];
    for (let batch = 0; batch < 20; batch++) {
      runner.send({
        type: "events",
        epoch,
        events: Array.from({ length: 5 }, (_, i) => agentEvent(batch * 5 + i + 1)),
      });
      viewers.push(watch(run.id, viewerToken, 0));
    }
    await runner.next("ack", (f) => f.highestSourceSeq === 100);
    await finish(runner, epoch);
    const stored = await allEvents(run.id);
    for (const viewer of await Promise.all(viewers)) {
      expect((await transcriptUntilEnd(viewer)).events).toEqual(stored);
    }
  });

  it("two hundred viewers on one run each receive the whole transcript", async () => {
    const { run, runnerToken, viewerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const viewers: SocketProbe[] = [];
    for (let i = 0; i < 200; i++) viewers.push(await watch(run.id, viewerToken, 0));
    runner.send({ type: "events", epoch, events: Array.from({ length: 10 }, (_, i) => agentEvent(i + 1)) });
    await runner.next("ack");
    await finish(runner, epoch);
    const stored = await allEvents(run.id);
    const seen = await Promise.all(viewers.map(transcriptUntilEnd));
    for (const transcript of seen) expect(transcript).toEqual({ events: stored, end: "succeeded", closeCode: 1000 });
  });

  it("attaching to a finished run replays it and ends at once", async () => {
    const { run, runnerToken, viewerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    await finish(runner, epoch);
    const viewer = await watch(run.id, viewerToken, 0);
    const seen = await transcriptUntilEnd(viewer);
    expect(seen).toEqual({ events: await allEvents(run.id), end: "succeeded", closeCode: 1000 });
  });

  it("an unknown run is 404 and a purged run is 410 with its final status, before any upgrade", async () => {
    const unknown = await call(`/v1/runs/${uniqueRunId()}/watch`, { headers: { upgrade: "websocket" } });
    expect(unknown.webSocket).toBeNull();
    expect((await json(unknown, 404)).error.code).toBe("not_found");
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "failed", exitCode: 1 } });
    await runner.next("completed");
    await json(await call(`/v1/runs/${run.id}`, { method: "DELETE" }), 200);
    const purged = await call(`/v1/runs/${run.id}/watch`, { headers: { upgrade: "websocket" } });
    expect(purged.webSocket).toBeNull();
    expect(await json(purged, 410)).toMatchObject({ error: { code: "gone" }, status: "failed" });
  });

  it("a read-only viewer's command is refused and stores nothing", async () => {
    const { run, runnerToken, viewerToken } = await createRun();
    await claim(run.id, runnerToken);
    const readOnly = await watch(run.id, viewerToken, 0);
    readOnly.send({ type: "command", command: { commandId: "v1", type: "input", text: "hi" } });
    expect((await readOnly.next("error")).code).toBe("forbidden");
    expect((await allEvents(run.id)).filter((e) => e.type === "command.queued")).toEqual([]);
  });

  it("an interacting viewer's command is accepted and reaches the runner", async () => {
    const { run, runnerToken } = await createRun();
    const { runner } = await claim(run.id, runnerToken);
    const operator = await watch(run.id, await interactingToken(run.id), 0);
    operator.send({ type: "command", command: { commandId: "v1", type: "input", text: "hi" } });
    expect((await operator.next("commandAccepted")).command).toMatchObject({ commandId: "v1", state: "delivered" });
    expect(await runner.next("command")).toMatchObject({ commandId: "v1", kind: "input", text: "hi" });
  });

  it("an interacting viewer's refused frames get the HTTP routes' error codes and store nothing", async () => {
    const { run, runnerToken } = await createRun();
    await claim(run.id, runnerToken);
    const operator = await watch(run.id, await interactingToken(run.id), 0);
    operator.send({ type: "command", command: { commandId: "v1", type: "input", text: "hi" } });
    await operator.next("commandAccepted");
    operator.send({ type: "command", command: { commandId: "v1", type: "input", text: "changed" } });
    expect((await operator.next("error")).code).toBe("conflict");
    operator.send({ type: "approval", requestId: "missing", approval: { decision: "approve" } });
    expect((await operator.next("error")).code).toBe("stale");
    operator.send({ type: "command", command: { commandId: "v2" } });
    expect((await operator.next("error")).code).toBe("invalid_frame");
    const queued = (await allEvents(run.id)).filter((e) => e.type === "command.queued");
    expect(queued.map((e) => (e.data as { commandId: string }).commandId)).toEqual(["v1"]);
  });
});

async function interactingToken(runId: string): Promise<string> {
  const minted = await json(
    await call(`/v1/runs/${runId}/tokens`, { method: "POST", json: { role: "viewer", interact: true } }),
    201,
  );
  return minted.token as string;
}
