import { type JsonBatch, stream } from "@durable-streams/client";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { useDevServer } from "../support/dev-server.ts";
import { waitFor } from "../support/wait.ts";
import { bearerSocket } from "../support/bearer-socket.ts";

/**
 * A run's log read by the official Durable Streams client (code we did not write) against a
 * real `wrangler dev`, while a runner appends over its WebSocket.
 */
const server = useDevServer();

/** A minimal runner over Node's WebSocket: every wait is bounded and names what it waited for. */
async function connectRunner(runId: string, token: string) {
  const ws = bearerSocket(`${server.url.replace("http", "ws")}/v1/runs/${runId}/runner`, token);
  const frames: Array<{ type: string; [key: string]: unknown }> = [];
  ws.addEventListener("message", (event) => frames.push(JSON.parse(String(event.data))));
  await waitFor("the runner socket to open", () => ws.readyState === WebSocket.OPEN, 10_000);
  const next = (type: string, where: (f: (typeof frames)[number]) => boolean = () => true) =>
    waitFor(
      `a "${type}" frame for the runner`,
      () => {
        const index = frames.findIndex((f) => f.type === type && where(f));
        return index >= 0 ? frames.splice(index, 1)[0] : undefined;
      },
      10_000,
    );
  return { ws, next, send: (frame: unknown) => ws.send(JSON.stringify(frame)) };
}

describe("a run's log as a Durable Streams stream", () => {
  it("the official client reading live over SSE from -1 receives exactly the stored log, resumes byte-exact, and sees the close", async () => {
    const { run, runnerToken, viewerToken } = await server.api.createRun({ input: { prompt: "stream me" } });
    const url = `${server.url}/v1/runs/${run.id}/stream`;
    const headers = { Authorization: `Bearer ${viewerToken}` };
    const batches: JsonBatch<RunEvent>[] = [];
    const live = await stream<RunEvent>({ url, headers, offset: "-1", live: "sse" });
    live.subscribeJson(async (batch) => {
      batches.push(batch);
    });

    const runner = await connectRunner(run.id, runnerToken);
    runner.send({ type: "hello", runnerId: "stream-test", lastSourceSeq: 0 });
    const epoch = (await runner.next("claimed")).epoch as number;
    for (let batch = 0; batch < 4; batch++) {
      const events = Array.from({ length: 5 }, (_, i) => {
        const sourceSeq = batch * 5 + i + 1;
        return { sourceSeq, type: "TEXT_MESSAGE_CONTENT", data: { delta: `part ${sourceSeq}` } };
      });
      runner.send({ type: "events", epoch, events });
      await runner.next("ack", (f) => f.highestSourceSeq === (batch + 1) * 5);
      // Let the reader see some batches live, one at a time.
      await waitFor(`the SSE reader to receive sourceSeq ${(batch + 1) * 5}`, () =>
        batches.some((b) => b.items.some((e) => e.sourceSeq === (batch + 1) * 5)),
      );
    }
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded", exitCode: 0 } });
    await runner.next("completed");
    await waitFor("the SSE reader to see the stream close", () => batches.some((b) => b.streamClosed), 15_000);
    runner.ws.close();

    const stored = await server.api.events(run.id);
    expect(stored.filter((e) => e.source === "runner")).toHaveLength(20);
    expect(batches.flatMap((b) => b.items)).toEqual(stored);
    expect(stored.at(-1)?.type).toBe("run.finished");

    // Resuming from the offset after a mid batch returns exactly the bytes of the events after it.
    const middle = batches.find((b) => b.items.some((e) => e.sourceSeq === 10));
    expect(middle, "no batch ended near the middle of the log").toBeDefined();
    const seenBefore = batches
      .slice(0, batches.indexOf(middle as JsonBatch<RunEvent>) + 1)
      .flatMap((b) => b.items).length;
    const resumed = await fetch(`${url}?offset=${encodeURIComponent(middle?.offset as string)}`, { headers });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get("stream-closed")).toBe("true");
    expect(await resumed.text()).toBe(
      `[${stored
        .slice(seenBefore)
        .map((e) => JSON.stringify(e))
        .join(",")}]`,
    );

    // A catch-up read with the client from the start sees the same log and the closed stream.
    const catchUp = await stream<RunEvent>({ url, headers, offset: "-1", live: false });
    expect(await catchUp.json()).toEqual(stored);
    expect(catchUp.streamClosed).toBe(true);
  });

  it("a viewer WebSocket and the stream carry the same events", async () => {
    const { run, runnerToken, viewerToken } = await server.api.createRun();
    const runner = await connectRunner(run.id, runnerToken);
    runner.send({ type: "hello", runnerId: "twin", lastSourceSeq: 0 });
    const epoch = (await runner.next("claimed")).epoch as number;
    runner.send({ type: "events", epoch, events: [{ sourceSeq: 1, type: "RUN_STARTED", data: { n: 1.5, s: "é" } }] });
    await runner.next("ack");
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");

    const viewer = new WebSocket(
      `${server.url.replace("http", "ws")}/v1/runs/${run.id}/watch?after=0&token=${viewerToken}`,
    );
    const raw: string[] = [];
    viewer.addEventListener("message", (event) => raw.push(String(event.data)));
    await waitFor("the viewer to receive end", () => raw.some((frame) => frame.includes('"type":"end"')), 10_000);
    const viewed = raw
      .map((frame) => JSON.parse(frame))
      .filter((f) => f.type === "events")
      .flatMap((f) => f.events);
    const body = await (
      await fetch(`${server.url}/v1/runs/${run.id}/stream?offset=-1`, {
        headers: { authorization: `Bearer ${viewerToken}` },
      })
    ).text();
    expect(body).toBe(`[${viewed.map((e: RunEvent) => JSON.stringify(e)).join(",")}]`);
  });
});
