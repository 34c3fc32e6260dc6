import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CommandFile } from "../../runner-bridge/src/command-file.ts";
import { runPaths } from "../../runner-bridge/src/rundir.ts";
import { FIXTURES, NODE } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";
import { waitFor } from "../support/wait.ts";
import { expectValidEvents, nativeOf } from "./unit/agui-support.ts";

const t = useEdge();
const CODEX = [NODE, path.join(FIXTURES, "fake-codex-app-server.mjs")];
const CLAUDE = [NODE, path.join(FIXTURES, "fake-claude-code.mjs")];

type StoredEvent = Awaited<ReturnType<typeof t.api.runnerEvents>>[number];
const dataOf = (e: StoredEvent | undefined) => e?.data as Record<string, unknown> | undefined;

/** The run's agent events, each checked to be a valid AG-UI event (or one of ours). */
async function agentEvents(runId: string): Promise<StoredEvent[]> {
  const events = await t.api.runnerEvents(runId);
  expectValidEvents(events);
  return events;
}

async function pendingApproval(runId: string, requestId: string) {
  return waitFor(`approval ${requestId} to be pending on the edge`, async () =>
    (await t.api.getRun(runId)).pendingApprovals.find((a) => a.requestId === requestId),
  );
}

describe("the codex adapter (app-server JSON-RPC over stdio)", () => {
  it("initializes, starts a thread and a turn, round-trips a command approval, and ends with the turn", async () => {
    const { run, bridge } = await t.startRun({
      agent: CODEX,
      extra: ["--adapter", "codex", "--prompt", "clean up, needs approval"],
    });
    const approval = await pendingApproval(run.id, "codex-0");
    expect(approval.data).toMatchObject({
      method: "item/commandExecution/requestApproval",
      command: "rm -rf build",
      turnId: "turn_1",
      toolCallId: "turn_1-cmd",
    });
    await t.api.approve(run.id, "codex-0", "approve");
    expect(await bridge.waitExit()).toBe(0);

    const events = await agentEvents(run.id);
    expect(events.map((e) => e.type)).toEqual([
      "RAW", // initialize response
      "agent.session", // thread/start response
      "RAW", // thread/started
      "RAW", // turn/start response
      "RUN_STARTED", // turn/started
      "TEXT_MESSAGE_CHUNK", // the prompt (item/started userMessage)
      "RAW", // item/completed userMessage
      "TOOL_CALL_CHUNK", // item/started commandExecution
      "approval.requested",
      "TOOL_CALL_RESULT", // item/completed commandExecution
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED", // turn/completed
    ]);
    expect(events.map((e) => e.sourceSeq)).toEqual(events.map((_, i) => i + 1));
    expect(nativeOf(events[0] as StoredEvent)).toMatchObject({
      id: "rb-initialize",
      result: { userAgent: "fake-codex/0.171.0" },
    });
    expect(dataOf(events[1])).toMatchObject({ provider: "codex", id: "thr_1" });
    expect(dataOf(events[5])).toMatchObject({ role: "user", delta: "clean up, needs approval" });
    expect(dataOf(events[7])).toMatchObject({ toolCallId: "turn_1-cmd", toolCallName: "commandExecution" });
    expect(dataOf(events[9])).toMatchObject({ toolCallId: "turn_1-cmd", content: "removed build/\n" });
    expect(dataOf(events[11])).toMatchObject({ messageId: "turn_1-msg", delta: "Removed the build directory." });
    expect(dataOf(events[13])).toMatchObject({ threadId: "thr_1", runId: "turn_1", outcome: { type: "success" } });
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("succeeded");
    expect(final.pendingApprovals).toEqual([]);
  });

  it("interrupt becomes turn/interrupt; the thread then takes the next input as a new turn", async () => {
    const { run, bridge } = await t.startRun({
      agent: CODEX,
      extra: ["--adapter", "codex", "--prompt", "wait for interrupt"],
    });
    await waitFor("the first turn to start", async () =>
      (await t.api.runnerEvents(run.id)).some((e) => e.type === "RUN_STARTED"),
    );
    await t.api.command(run.id, { commandId: "stop-1", type: "interrupt" });
    await waitFor("the turn to end cancelled", async () =>
      (await t.api.runnerEvents(run.id)).some((e) => e.type === "RUN_FINISHED"),
    );
    await t.api.command(run.id, { commandId: "next-1", type: "input", text: "now finish" });
    expect(await bridge.waitExit()).toBe(0);
    const events = await agentEvents(run.id);
    const runs = events
      .filter((e) => e.type === "RUN_STARTED" || e.type === "RUN_FINISHED")
      .map((e) => [e.type, dataOf(e)?.runId, (dataOf(e)?.outcome as { type: string } | undefined)?.type]);
    expect(runs).toEqual([
      ["RUN_STARTED", "turn_1", undefined],
      ["RUN_FINISHED", "turn_1", "cancelled"],
      ["RUN_STARTED", "turn_2", undefined],
      ["RUN_FINISHED", "turn_2", "success"],
    ]);
    const said = events
      .filter((e) => e.type.startsWith("TEXT_MESSAGE_C"))
      .map((e) => [dataOf(e)?.role, dataOf(e)?.delta]);
    expect(said).toEqual([
      ["user", "wait for interrupt"],
      ["user", "now finish"],
      [undefined, "You said: now finish"],
    ]);
    expect((await t.api.getRun(run.id)).status).toBe("succeeded");
  });
});

describe("adapters after a takeover", () => {
  it("a codex approval answered after kill -9 reaches the agent through the successor, once", async () => {
    const started = await t.startRun({ agent: CODEX, extra: ["--adapter", "codex", "--prompt", "needs approval"] });
    const { run, bridge: first } = started;
    await pendingApproval(run.id, "codex-0");
    await first.kill9();
    // The decision is queued while no bridge is connected; the successor learns the JSON-RPC id
    // of the request only by re-reading the journal, and must not repeat the startup handshake.
    await t.api.approve(run.id, "codex-0", "approve");
    const successor = t.attach(started);
    expect(await successor.waitExit()).toBe(0);
    const events = await agentEvents(run.id);
    const responses = events.map((e) => nativeOf(e) as { id?: string; method?: string }).filter((m) => !m.method);
    expect(responses.map((m) => m.id)).toEqual(["rb-initialize", "rb-thread-start", "rb-turn-prompt"]);
    expect(events.filter((e) => e.type === "RUN_FINISHED")).toHaveLength(1);
    expect(dataOf(events.find((e) => e.type === "TEXT_MESSAGE_CONTENT"))).toMatchObject({
      delta: "Removed the build directory.",
    });
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("succeeded");
    expect(final.epoch).toBe(2);
  });

  it("a claude-code approval answered after kill -9 reaches the agent through the successor, once", async () => {
    const started = await t.startRun({
      agent: CLAUDE,
      extra: ["--adapter", "claude-code", "--prompt", "needs approval"],
    });
    const { run, bridge: first } = started;
    await pendingApproval(run.id, "perm-1");
    await first.kill9();
    await t.api.approve(run.id, "perm-1", "approve");
    const successor = t.attach(started);
    expect(await successor.waitExit()).toBe(0);
    const events = await agentEvents(run.id);
    // One handshake and one prompt (from the first bridge), one tool result: nothing repeated.
    expect(events.map((e) => e.type)).toEqual([
      "RAW", // control_response to initialize
      "agent.session", // system/init
      "TOOL_CALL_CHUNK",
      "approval.requested",
      "TOOL_CALL_RESULT",
      "TEXT_MESSAGE_CHUNK",
      "RUN_FINISHED", // result
    ]);
    expect(dataOf(events[4])).toMatchObject({ toolCallId: "toolu_1", content: "ran: rm -rf build" });
    const final = await t.api.getRun(run.id);
    expect(final).toMatchObject({ status: "succeeded", epoch: 2 });
  });
});

describe("the claude-code adapter (stream-json in and out)", () => {
  it("sends the prompt, turns can_use_tool into an approval, answers it, and ends with the result", async () => {
    const { run, bridge } = await t.startRun({
      agent: CLAUDE,
      extra: ["--adapter", "claude-code", "--prompt", "clean up, needs approval"],
    });
    const approval = await pendingApproval(run.id, "perm-1");
    expect(approval.data).toMatchObject({
      toolName: "Bash",
      input: { command: "rm -rf build" },
      toolCallId: "toolu_1",
    });
    await t.api.approve(run.id, "perm-1", "approve");
    expect(await bridge.waitExit()).toBe(0);

    const events = await agentEvents(run.id);
    expect(events.map((e) => e.type)).toEqual([
      "RAW", // control_response to initialize
      "agent.session", // system/init
      "TOOL_CALL_CHUNK", // the Bash tool_use
      "approval.requested", // can_use_tool
      "TOOL_CALL_RESULT", // the tool_result
      "TEXT_MESSAGE_CHUNK", // the answer
      "RUN_FINISHED", // result
    ]);
    expect(dataOf(events[1])).toMatchObject({ provider: "claude-code", id: "sess-fixture" });
    expect(dataOf(events[2])).toMatchObject({ toolCallId: "toolu_1", toolCallName: "Bash" });
    expect(dataOf(events[4])).toMatchObject({ toolCallId: "toolu_1", content: "ran: rm -rf build" });
    expect(dataOf(events[5])).toMatchObject({ role: "assistant", delta: "Build directory removed." });
    expect(dataOf(events[6])).toMatchObject({
      threadId: "sess-fixture",
      result: "Build directory removed.",
      outcome: { type: "success" },
    });
    expect((await t.api.getRun(run.id)).status).toBe("succeeded");
  });

  it("a denied tool reaches the agent as a deny with the reason", async () => {
    const { run, bridge } = await t.startRun({
      agent: CLAUDE,
      extra: ["--adapter", "claude-code", "--prompt", "needs approval"],
    });
    await pendingApproval(run.id, "perm-1");
    await t.api.approve(run.id, "perm-1", "deny", "not today");
    expect(await bridge.waitExit()).toBe(0);
    const toolResult = (await agentEvents(run.id)).find((e) => e.type === "TOOL_CALL_RESULT");
    expect(dataOf(toolResult)).toMatchObject({ toolCallId: "toolu_1", content: "denied: not today" });
  });

  it("interrupt reaches the agent as one interrupt control request, and the interrupted result fails the run", async () => {
    const { run, bridge } = await t.startRun({
      agent: CLAUDE,
      extra: ["--adapter", "claude-code", "--prompt", "wait for interrupt"],
    });
    await waitFor("the turn to start", async () =>
      (await t.api.runnerEvents(run.id)).some((e) => e.type === "TEXT_MESSAGE_CHUNK"),
    );
    await t.api.command(run.id, { commandId: "stop-1", type: "interrupt" });
    expect(await bridge.waitExit()).toBe(0);
    const events = await agentEvents(run.id);
    const interruptAcks = events.filter(
      (e) => (nativeOf(e) as { response?: { request_id?: string } }).response?.request_id === "rb-stop-1",
    );
    expect(interruptAcks.map((e) => e.type)).toEqual(["RAW"]);
    expect(events.at(-1)).toMatchObject({
      type: "RUN_ERROR",
      data: { message: "Interrupted.", code: "claude_error_during_execution" },
    });
    expect(await t.api.getRun(run.id)).toMatchObject({
      status: "failed",
      outcome: { error: { code: "claude_error_during_execution", message: "Interrupted." } },
    });
  });
});

describe("adapter reactions", () => {
  it("wait for the inbox lock that command delivery takes, then reach the agent once", async () => {
    // The agent holds the inbox lock (a lock file naming a live pid) while it makes the codex
    // adapter react: a server request the bridge does not handle is answered with an error.
    const dir = t.runDir();
    const lock = `${runPaths(dir).inbox}.lock`;
    const request = { method: "tools/call", id: 7, params: {} };
    const go = marker("go");
    const { run, bridge } = await t.startRun({
      dir,
      agent: t.agent([{ touch: lock }, { out: JSON.stringify(request) }, { waitFile: go }, { readLines: 2 }]),
      extra: ["--adapter", "codex"],
    });
    await waitFor("the server request to be stored", async () =>
      (await t.api.runnerEvents(run.id)).some((e) => e.type === "RAW"),
    );
    const before = new CommandFile(runPaths(dir).inbox).read();
    expect(before.map((e) => e.commandId)).toEqual(["codex:initialize"]); // nothing written under a held lock
    fs.rmSync(lock);
    touch(go);

    expect(await bridge.waitExit()).toBe(0);
    const initialize = JSON.parse(before[0]?.line ?? "null");
    const answer = { id: 7, error: { code: -32601, message: "runner-bridge does not handle tools/call" } };
    const received = (line: unknown) => ({ event: { type: "agent.received", line }, source: "codex" });
    expect(await agentEvents(run.id)).toEqual([
      { sourceSeq: 1, type: "RAW", data: { event: request, source: "codex" } },
      { sourceSeq: 2, type: "RAW", data: received(initialize) },
      { sourceSeq: 3, type: "RAW", data: received(answer) },
    ]);
  });
});
