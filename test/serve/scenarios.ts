/**
 * The core scenarios, written once and run against any server (`npm run serve`, `wrangler dev`):
 * create a run, claim it over the runner socket, stream events, watch live and replay, a timer
 * firing. Each asserts transcripts: what viewers received against what the log stored against
 * what the runner sent, element for element.
 */
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { waitFor } from "../support/wait.ts";
import { type Frame, openJsonSocket } from "./socket.ts";

export interface Server {
  url: string;
  apiKey: string;
}

interface StoredEvent {
  seq: number;
  source: string;
  sourceSeq?: number;
  type: string;
  data: unknown;
}

export async function api(server: Server, method: string, route: string, body?: unknown) {
  const res = await fetch(server.url + route, {
    method,
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: body === undefined ? null : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}

export async function createRun(server: Server, body: Record<string, unknown> = {}) {
  const runId = `scenario-${randomUUID()}`;
  const res = await api(server, "POST", "/v1/runs", { runId, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { runId, runnerToken: res.body.runnerToken as string, viewerToken: res.body.viewerToken as string };
}

export async function storedEvents(server: Server, runId: string): Promise<StoredEvent[]> {
  const res = await api(server, "GET", `/v1/runs/${runId}/events?after=0&limit=500`);
  expect(res.status).toBe(200);
  expect(res.body.hasMore).toBe(false);
  return res.body.events as StoredEvent[];
}

const wsUrl = (server: Server, route: string) => server.url.replace(/^http/, "ws") + route;

/** The agent's output the scenarios stream: AG-UI-shaped events in two frames. */
export const SENT = [
  { sourceSeq: 1, type: "RUN_STARTED", data: { threadId: "t1" } },
  { sourceSeq: 2, type: "TEXT_MESSAGE_START", data: { messageId: "m1", role: "assistant" } },
  { sourceSeq: 3, type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m1", delta: "Hello, " } },
  { sourceSeq: 4, type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m1", delta: "world." } },
  { sourceSeq: 5, type: "TEXT_MESSAGE_END", data: { messageId: "m1" } },
];

function eventsOf(frames: Frame[]): unknown[] {
  return frames.filter((f) => f.type === "events").flatMap((f) => f.events as unknown[]);
}

/** Create, claim, stream in two frames, a live viewer and a replaying one, complete. Returns the run id. */
export async function createClaimStreamWatch(server: Server): Promise<string> {
  const run = await createRun(server, { agent: { name: "scenario" }, input: { prompt: "say hello" } });
  const live = await openJsonSocket(
    wsUrl(server, `/v1/runs/${run.runId}/watch?after=0&token=${run.viewerToken}`),
    "viewer",
  );
  const runner = await openJsonSocket(wsUrl(server, `/v1/runs/${run.runId}/runner`), "runner", run.runnerToken);
  runner.send({ type: "hello", runnerId: "scenario-runner", lastSourceSeq: 0 });
  const claimed = await runner.next("claimed");
  expect(claimed).toMatchObject({ epoch: 1, ackedSourceSeq: 0, commands: [] });

  runner.send({ type: "events", epoch: 1, events: SENT.slice(0, 3) });
  expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 3 });
  runner.send({ type: "events", epoch: 1, events: SENT.slice(3) });
  expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 5 });
  runner.send({ type: "complete", epoch: 1, outcome: { status: "succeeded", exitCode: 0 } });
  expect(await runner.next("completed")).toEqual({ type: "completed", status: "succeeded" });
  runner.close();

  const stored = await storedEvents(server, run.runId);
  expect(stored.map((e) => e.type)).toEqual(["run.created", "run.claimed", ...SENT.map((e) => e.type), "run.finished"]);
  expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
  expect(
    stored.filter((e) => e.source === "runner").map(({ sourceSeq, type, data }) => ({ sourceSeq, type, data })),
  ).toEqual(SENT);

  const liveFrames = await live.until("end");
  expect(eventsOf(liveFrames)).toEqual(stored);
  expect(liveFrames.at(-1)).toEqual({ type: "end", status: "succeeded" });
  live.close();

  const replay = await openJsonSocket(
    wsUrl(server, `/v1/runs/${run.runId}/watch?after=2&token=${run.viewerToken}`),
    "replay viewer",
  );
  const replayFrames = await replay.until("end");
  expect(eventsOf(replayFrames)).toEqual(stored.slice(2));
  replay.close();
  return run.runId;
}

/** A run nobody claims times out by its claim timer: an alarm, not a sleep in the client. */
export async function claimTimerFires(server: Server, claimMs = 1500): Promise<void> {
  const run = await createRun(server, { timeouts: { claimMs } });
  const record = await waitFor(
    `run ${run.runId} to be timed out by its claim timer (claimMs ${claimMs})`,
    async () => {
      const res = await api(server, "GET", `/v1/runs/${run.runId}`);
      return res.body.status === "timed_out" ? res.body : undefined;
    },
    claimMs + 20_000,
    100,
  );
  expect(record.outcome).toMatchObject({ status: "timed_out", error: { code: "claim_timeout" } });
  const stored = await storedEvents(server, run.runId);
  expect(stored.map((e) => e.type)).toEqual(["run.created", "run.finished"]);
}
