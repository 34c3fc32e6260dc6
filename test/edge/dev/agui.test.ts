import { HttpAgent } from "@ag-ui/client";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../../src/protocol/index.ts";
import { useDevServer } from "../../support/dev-server.ts";
import { startProxy } from "../../support/proxy.ts";
import { type AgentEvent, TestRunner } from "../../support/runner-client.ts";
import { waitFor } from "../../support/wait.ts";

// AG-UI's own client (@ag-ui/client's HttpAgent, what CopilotKit runs on) against a real
// `wrangler dev`: it must receive the run's log, event for event, as docs/AGUI.md maps it.

const HEARTBEAT_MS = 300;
const LIFETIME_MS = 6_000;
const dev = useDevServer({ AGUI_HEARTBEAT_MS: String(HEARTBEAT_MS), AGUI_STREAM_LIFETIME_MS: String(LIFETIME_MS) });

type Agui = { type: string } & Record<string, unknown>;

const turnStart: AgentEvent = { type: "RUN_STARTED", data: { threadId: "session-1", runId: "turn-1" } };
const firstMessage: AgentEvent[] = [
  { type: "TEXT_MESSAGE_START", data: { messageId: "m1", role: "assistant" } },
  { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m1", delta: "Reading " } },
  { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m1", delta: "the repo." } },
  { type: "TEXT_MESSAGE_END", data: { messageId: "m1" } },
];
const toolCall: AgentEvent[] = [
  { type: "TOOL_CALL_START", data: { toolCallId: "t1", toolCallName: "shell", parentMessageId: "m1" } },
  { type: "TOOL_CALL_ARGS", data: { toolCallId: "t1", delta: '{"cmd":"ls"}' } },
  { type: "TOOL_CALL_END", data: { toolCallId: "t1" } },
  { type: "TOOL_CALL_RESULT", data: { messageId: "t1:result", toolCallId: "t1", content: "README.md", role: "tool" } },
  { type: "agent.session", data: { provider: "test", id: "session-1" } },
];
const secondMessage: AgentEvent[] = [
  { type: "TEXT_MESSAGE_START", data: { messageId: "m2", role: "assistant" } },
  { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m2", delta: "Done." } },
  { type: "TEXT_MESSAGE_END", data: { messageId: "m2" } },
  { type: "RAW", data: { event: { kind: "native" }, source: "test" } },
  { type: "RUN_FINISHED", data: { threadId: "session-1", runId: "turn-1", outcome: { type: "success" } } },
];

const PASSED_THROUGH = new Set(["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RAW"]);
for (const type of ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]) PASSED_THROUGH.add(type);

/** The mapping docs/AGUI.md states, written out independently of the route's code. */
function expectedAgui(log: RunEvent[], runId: string): Agui[] {
  return log.map((event) => {
    if (event.type === "run.finished") {
      const { status, error } = (
        event.data as { outcome: { status: string; error?: { code: string; message: string } } }
      ).outcome;
      if (status === "succeeded")
        return { type: "RUN_FINISHED", threadId: runId, runId, outcome: { type: "success" }, result: { status } };
      return { type: "RUN_ERROR", message: error?.message ?? `run ${status}`, code: error?.code ?? status };
    }
    if (PASSED_THROUGH.has(event.type)) return { type: event.type, ...(event.data as object) };
    return { type: "CUSTOM", name: event.type, value: event.data };
  });
}

const opening = (runId: string): Agui => ({ type: "RUN_STARTED", threadId: runId, runId });

/** A run fed by a real runner over its socket. */
async function startRun() {
  const created = await dev.api.createRun({ agent: "agui-test" });
  const runner = await TestRunner.connect(dev.url, created.run.id, created.runnerToken);
  return { runId: created.run.id, viewerToken: created.viewerToken, runner };
}

/** An unmodified HttpAgent following the run; every event it receives, in order. */
function follow(base: string, runId: string, headers: Record<string, string> = {}) {
  const agent = new HttpAgent({
    url: `${base}/v1/runs/${runId}/agui`,
    headers: { authorization: `Bearer ${dev.api.key}`, ...headers },
  });
  return { agent, ...run(agent) };
}

/** One more runAgent of the same HttpAgent (resumed after `lastSeq` when given); every event it receives. */
function run(agent: HttpAgent, lastSeq?: number) {
  if (lastSeq !== undefined) agent.headers = { ...agent.headers, "Last-Event-ID": String(lastSeq) };
  const received: Agui[] = [];
  let refused: unknown = null;
  const done = agent.runAgent({}, { onEvent: ({ event }) => void received.push(event as unknown as Agui) }).then(
    (result) => ({ ok: true as const, result }),
    (error: unknown) => {
      refused = error;
      return { ok: false as const, error };
    },
  );
  /** `count` events received; a refused run throws, so a bounded wait names the refusal. */
  const reached = (count: number) => {
    if (refused) throw refused;
    return received.length === count;
  };
  return { received, done, reached };
}

/** An HttpAgent's messages, each as [id, role, content, its tool calls as [id, name, arguments]]. */
function messagesOf(agent: HttpAgent) {
  return agent.messages.map((message) => {
    const m = message as { id: string; role: string; content?: unknown; toolCalls?: ToolCall[] };
    const calls = m.toolCalls?.map((call) => [call.id, call.function.name, call.function.arguments]);
    return [m.id, m.role, m.content, ...(calls ? [calls] : [])];
  });
}
type ToolCall = { id: string; function: { name: string; arguments: string } };

async function finished<T>(what: string, promise: Promise<T>, ms = 30_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe("GET|POST /v1/runs/:runId/agui with @ag-ui/client", () => {
  it("an HttpAgent following a live run receives the whole log, element by element, and its messages", async () => {
    const { runId, runner } = await startRun();
    const client = follow(dev.url, runId);
    await waitFor("the live stream to open with RUN_STARTED", () => client.received.length >= 1, 20_000);
    await runner.send([turnStart, ...firstMessage]);
    await runner.send([...toolCall, ...secondMessage]);
    await runner.complete({ status: "succeeded" });
    const outcome = await finished("the HttpAgent's run to end", client.done);
    expect(outcome.ok, String(outcome.ok ? "" : outcome.error)).toBe(true);

    const log = await dev.api.events(runId);
    expect(client.received).toEqual([opening(runId), ...expectedAgui(log, runId)]);
    const texts = client.agent.messages.filter((m) => m.role === "assistant").map((m) => m.content);
    expect(texts).toEqual(["Reading the repo.", "Done."]);
  });

  it("a finished run replays whole, and ends with RUN_ERROR when the run failed", async () => {
    const { runId, runner } = await startRun();
    await runner.send([turnStart, ...firstMessage]);
    await runner.complete({ status: "failed", error: { code: "agent_crashed", message: "exit 3" } });
    const client = follow(dev.url, runId);
    const outcome = await finished("the replay to end", client.done);
    expect(outcome.ok, String(outcome.ok ? "" : outcome.error)).toBe(true);
    const log = await dev.api.events(runId);
    const expected = expectedAgui(log, runId);
    expect(expected.at(-1)).toEqual({ type: "RUN_ERROR", message: "exit 3", code: "agent_crashed" });
    expect(client.received).toEqual([opening(runId), ...expected.slice(0, -1), expected.at(-1)]);
  });

  it("aborted mid-run and resumed with Last-Event-ID: every event once, in order", async () => {
    const { runId, runner } = await startRun();
    const first = follow(dev.url, runId);
    await runner.send([turnStart, ...firstMessage]);
    const logSoFar = await dev.api.events(runId);
    await waitFor(`the first ${logSoFar.length} events`, () => first.received.length === 1 + logSoFar.length, 20_000);
    // One AG-UI event per log event after the opening one: the count is the seq reached.
    const lastSeq = first.received.length - 1;
    first.agent.abortRun(); // the client goes away, as a closed tab does
    await finished("the aborted HttpAgent run to end", first.done);
    // The only event after the abort is the client's own report of it, not one of the stream's.
    expect(first.received.slice(lastSeq + 1).map((e) => [e.type, e.code])).toEqual([["RUN_ERROR", "abort"]]);

    await runner.send(toolCall); // while no one is connected
    const second = follow(dev.url, runId, { "Last-Event-ID": String(lastSeq) });
    await waitFor("the resumed stream to catch up", () => second.received.length === 1 + toolCall.length, 20_000);
    await runner.send(secondMessage);
    await runner.complete({ status: "succeeded" });
    const resumed = await finished("the resumed run to end", second.done);
    expect(resumed.ok, String(resumed.ok ? "" : resumed.error)).toBe(true);

    const log = await dev.api.events(runId);
    expect(second.received[0]).toEqual(opening(runId));
    const beforeAbort = first.received.slice(1, lastSeq + 1);
    expect([...beforeAbort, ...second.received.slice(1)]).toEqual(expectedAgui(log, runId));
  });

  it("one HttpAgent resumed inside an open message, then an open tool call: each START again, each message once", async () => {
    const { runId, runner } = await startRun();
    const lastSeq = async () => (await dev.api.events(runId)).at(-1)?.seq ?? 0;
    const first = follow(dev.url, runId);
    await runner.send([turnStart, ...firstMessage.slice(0, 2)]); // m1 started, "Reading " so far
    const firstCut = await lastSeq();
    await waitFor(`the first response up to seq ${firstCut}`, () => first.reached(1 + firstCut), 20_000);
    first.agent.abortRun();
    await finished("the first runAgent to end", first.done);

    await runner.send([...firstMessage.slice(2), toolCall[0] as AgentEvent]); // m1 ends, t1 starts
    const secondCut = await lastSeq();
    const second = run(first.agent, firstCut);
    // The opening RUN_STARTED and m1's START again, then the log after the cut.
    const secondCount = 2 + secondCut - firstCut;
    await waitFor(`the second response up to seq ${secondCut}`, () => second.reached(secondCount), 20_000);
    first.agent.abortRun();
    await finished("the second runAgent to end", second.done);

    await runner.send([...toolCall.slice(1), ...secondMessage]);
    await runner.complete({ status: "succeeded" });
    const third = run(first.agent, secondCut);
    const outcome = await finished("the third runAgent to end", third.done);
    expect(outcome.ok, String(outcome.ok ? "" : outcome.error)).toBe(true);

    const log = await dev.api.events(runId);
    const expected = expectedAgui(log, runId);
    const [m1Start, t1Start] = [firstMessage[0], toolCall[0]].map((e) => ({ type: e?.type, ...(e?.data as object) }));
    expect(second.received.slice(0, secondCount)).toEqual([
      opening(runId),
      m1Start,
      ...expected.slice(firstCut, secondCut),
    ]);
    expect(third.received).toEqual([opening(runId), t1Start, ...expected.slice(secondCut)]);
    expect(messagesOf(first.agent)).toEqual([
      ["m1", "assistant", "Reading the repo.", [["t1", "shell", '{"cmd":"ls"}']]],
      ["t1:result", "tool", "README.md"],
      ["m2", "assistant", "Done."],
    ]);

    // On the wire the START sent again has no id: Last-Event-ID stays the client's seq.
    const auth = { authorization: `Bearer ${dev.api.key}` };
    const raw = sseReader(`${dev.url}/v1/runs/${runId}/agui`, { ...auth, "last-event-id": String(firstCut) });
    await finished("the raw resumed read to end", raw.done);
    expect(raw.frames).toEqual([
      { id: null, data: opening(runId) },
      { id: null, data: m1Start },
      ...log.slice(firstCut).map((event) => ({ id: event.seq, data: expected[event.seq - 1] })),
    ]);
  });
});

/** The raw SSE text of a GET, read until the server ends it (bounded). */
async function readSse(path: string, headers: Record<string, string>, ms = 20_000) {
  const response = await fetch(`${dev.url}${path}`, { headers, signal: AbortSignal.timeout(ms) });
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

/** Reads SSE frames as they arrive, keeping each complete frame's id and data; a cut just stops it. */
function sseReader(url: string, headers: Record<string, string>) {
  const frames: Array<{ id: number | null; data: Agui }> = [];
  let ended: "closed" | "cut" | null = null;
  const done = (async () => {
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
      const reader = (response.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
      let buffered = "";
      for (;;) {
        const { done: over, value } = await reader.read();
        if (over) break;
        buffered += value;
        const parts = buffered.split("\n\n");
        buffered = parts.pop() ?? "";
        for (const part of parts) {
          const lines = part.split("\n");
          const data = lines.find((line) => line.startsWith("data: "));
          if (!data) continue; // a heartbeat comment
          const id = lines.find((line) => line.startsWith("id: "));
          frames.push({ id: id ? Number(id.slice(4)) : null, data: JSON.parse(data.slice(6)) });
        }
      }
      ended = "closed";
    } catch {
      ended = "cut";
    }
  })();
  return { frames, done, ended: () => ended };
}

describe("the AG-UI stream's wire, bounds and refusals", () => {
  it("across a cut TCP connection, resuming from the last id received: no duplicate, no gap", async () => {
    const proxy = await startProxy(Number(new URL(dev.url).port));
    try {
      const { runId, runner } = await startRun();
      const headers = { authorization: `Bearer ${dev.api.key}` };
      const first = sseReader(`${proxy.url}/v1/runs/${runId}/agui`, headers);
      await runner.send([turnStart, ...firstMessage]);
      const soFar = (await dev.api.events(runId)).length;
      await waitFor(`${soFar} events through the proxy`, () => first.frames.length === 1 + soFar, 20_000);
      expect(proxy.cutAll()).toBeGreaterThan(0);
      await finished("the cut reader to stop", first.done);
      expect(first.ended()).toBe("cut");

      await runner.send(toolCall);
      const lastId = first.frames.at(-1)?.id;
      expect(lastId).toBe(soFar);
      const second = sseReader(`${proxy.url}/v1/runs/${runId}/agui`, { ...headers, "last-event-id": String(lastId) });
      await runner.send(secondMessage);
      await runner.complete({ status: "succeeded" });
      await finished("the resumed reader to reach the end of the run", second.done);
      expect(second.ended()).toBe("closed");

      const log = await dev.api.events(runId);
      expect(first.frames[0]).toEqual({ id: null, data: opening(runId) });
      expect(second.frames[0]).toEqual({ id: null, data: opening(runId) });
      const joined = [...first.frames.slice(1), ...second.frames.slice(1)];
      const expected = expectedAgui(log, runId);
      expect(joined).toEqual(log.map((event, i) => ({ id: event.seq, data: expected[i] })));
    } finally {
      await proxy.close();
    }
  });

  it("carries each event's seq as its id, beats on idle, and ends at its lifetime while the run goes on", async () => {
    const { runId, viewerToken, runner } = await startRun();
    await runner.send(firstMessage);
    const log = await dev.api.events(runId);
    const started = Date.now();
    // A viewer token in ?token=, as EventSource would send it; from seq 1 on.
    const sse = await readSse(`/v1/runs/${runId}/agui?token=${viewerToken}&after=1`, {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIFETIME_MS - 1_000);
    expect(sse.status).toBe(200);
    expect(sse.type).toBe("text/event-stream");
    const frames = sse.text.split("\n\n").filter((frame) => frame !== "");
    const data = frames.filter((frame) => !frame.startsWith(":"));
    expect(data[0]).toBe(`data: ${JSON.stringify(opening(runId))}`);
    const expected = expectedAgui(log, runId).slice(1);
    expect(data.slice(1)).toEqual(log.slice(1).map((e, i) => `id: ${e.seq}\ndata: ${JSON.stringify(expected[i])}`));
    const beats = frames.filter((frame) => frame === ": keep-alive");
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(frames.length).toBe(data.length + beats.length);
    runner.close();
  });

  it("refuses bad resume points, unknown runs and missing credentials with JSON errors", async () => {
    const { runId } = await startRun();
    const auth = { authorization: `Bearer ${dev.api.key}` };
    const cases: Array<[string, Record<string, string>, number, string]> = [
      [`/v1/runs/${runId}/agui`, { ...auth, "last-event-id": "abc" }, 400, "invalid_request"],
      [`/v1/runs/${runId}/agui`, { ...auth, "last-event-id": "-1" }, 400, "invalid_request"],
      [`/v1/runs/${runId}/agui`, { ...auth, "last-event-id": "999" }, 400, "invalid_request"],
      [`/v1/runs/${runId}/agui?after=x`, auth, 400, "invalid_query"],
      ["/v1/runs/no-such-run/agui", auth, 404, "not_found"],
      [`/v1/runs/${runId}/agui`, {}, 401, "unauthorized"],
    ];
    for (const [path, headers, status, code] of cases) {
      for (const method of ["GET", "POST"]) {
        const response = await fetch(`${dev.url}${path}`, { method, headers });
        const body = (await response.json()) as { error: { code: string; message: string } };
        expect({ method, path, status: response.status, code: body.error.code }).toEqual({
          method,
          path,
          status,
          code,
        });
        expect(body.error.message.length).toBeGreaterThan(0);
      }
    }
  });
});
