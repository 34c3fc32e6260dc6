import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CommandFile } from "../../runner-bridge/src/command-file.ts";
import { runPaths } from "../../runner-bridge/src/rundir.ts";
import { FIXTURES, NODE } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";
import { waitFor } from "../support/wait.ts";

const t = useEdge();
const CODEX = [NODE, path.join(FIXTURES, "fake-codex-app-server.mjs")];
const CLAUDE = [NODE, path.join(FIXTURES, "fake-claude-code.mjs")];

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
    });
    await t.api.approve(run.id, "codex-0", "approve");
    expect(await bridge.waitExit()).toBe(0);

    const events = await t.api.runnerEvents(run.id);
    expect(events.map((e) => e.type)).toEqual([
      "rpc/response", // initialize
      "rpc/response", // thread/start
      "thread/started",
      "rpc/response", // turn/start
      "turn/started",
      "item/started",
      "item/completed",
      "item/started",
      "approval.requested",
      "item/completed",
      "item/started",
      "item/agentMessage/delta",
      "item/completed",
      "turn/completed",
    ]);
    expect(events.map((e) => e.sourceSeq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]?.data).toEqual({ id: "rb-initialize", result: { userAgent: "fake-codex/0.0.1" } });
    expect(events[9]?.data).toMatchObject({ item: { type: "commandExecution", status: "completed" } });
    expect(events[11]?.data).toMatchObject({ delta: "Removed the build directory." });
    expect(events[13]?.data).toMatchObject({ turn: { id: "turn_1", status: "completed" } });
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
      (await t.api.runnerEvents(run.id)).some((e) => e.type === "turn/started"),
    );
    await t.api.command(run.id, { commandId: "stop-1", type: "interrupt" });
    await waitFor("the turn to end interrupted", async () =>
      (await t.api.runnerEvents(run.id)).some(
        (e) => e.type === "turn/completed" && (e.data as { turn: { status: string } }).turn.status === "interrupted",
      ),
    );
    await t.api.command(run.id, { commandId: "next-1", type: "input", text: "now finish" });
    expect(await bridge.waitExit()).toBe(0);
    const turns = (await t.api.runnerEvents(run.id))
      .filter((e) => e.type === "turn/completed")
      .map((e) => (e.data as { turn: { id: string; status: string } }).turn);
    expect(turns).toEqual([
      { id: "turn_1", status: "interrupted", items: [], error: null },
      { id: "turn_2", status: "completed", items: [], error: null },
    ]);
    const deltas = (await t.api.runnerEvents(run.id))
      .filter((e) => e.type === "item/agentMessage/delta")
      .map((e) => e.data);
    expect(deltas).toEqual([expect.objectContaining({ delta: "You said: now finish" })]);
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
    const events = await t.api.runnerEvents(run.id);
    expect(events.filter((e) => e.type === "rpc/response").map((e) => (e.data as { id: string }).id)).toEqual([
      "rb-initialize",
      "rb-thread-start",
      "rb-turn-prompt",
    ]);
    expect(events.filter((e) => e.type === "turn/completed")).toHaveLength(1);
    expect(events.find((e) => e.type === "item/agentMessage/delta")?.data).toMatchObject({
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
    const events = await t.api.runnerEvents(run.id);
    // One handshake and one prompt (from the first bridge), one tool result: nothing repeated.
    expect(events.map((e) => e.type)).toEqual([
      "control_response",
      "system",
      "assistant",
      "approval.requested",
      "user",
      "assistant",
      "result",
    ]);
    expect(events[4]?.data).toMatchObject({
      message: { content: [{ type: "tool_result", content: "ran: rm -rf build" }] },
    });
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
    expect(approval.data).toMatchObject({ toolName: "Bash", input: { command: "rm -rf build" } });
    await t.api.approve(run.id, "perm-1", "approve");
    expect(await bridge.waitExit()).toBe(0);

    const events = await t.api.runnerEvents(run.id);
    expect(events.map((e) => e.type)).toEqual([
      "control_response", // initialize
      "system",
      "assistant",
      "approval.requested",
      "user",
      "assistant",
      "result",
    ]);
    expect(events[4]?.data).toMatchObject({
      message: { content: [{ type: "tool_result", content: "ran: rm -rf build" }] },
    });
    expect(events[6]?.data).toMatchObject({ subtype: "success", is_error: false, result: "Build directory removed." });
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
    const toolResult = (await t.api.runnerEvents(run.id)).find((e) => e.type === "user");
    expect(toolResult?.data).toMatchObject({
      message: { content: [{ type: "tool_result", content: "denied: not today", is_error: true }] },
    });
  });

  it("interrupt reaches the agent as one interrupt control request, and the interrupted result fails the run", async () => {
    const { run, bridge } = await t.startRun({
      agent: CLAUDE,
      extra: ["--adapter", "claude-code", "--prompt", "wait for interrupt"],
    });
    await waitFor("the turn to start", async () =>
      (await t.api.runnerEvents(run.id)).some((e) => e.type === "assistant"),
    );
    await t.api.command(run.id, { commandId: "stop-1", type: "interrupt" });
    expect(await bridge.waitExit()).toBe(0);
    const events = await t.api.runnerEvents(run.id);
    const interruptAcks = events.filter(
      (e) =>
        e.type === "control_response" &&
        (e.data as { response: { request_id: string } }).response.request_id === "rb-stop-1",
    );
    expect(interruptAcks).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "result", data: { is_error: true, result: "Interrupted." } });
    expect((await t.api.getRun(run.id)).status).toBe("failed");
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
      (await t.api.runnerEvents(run.id)).some((e) => e.type === "rpc/request"),
    );
    const before = new CommandFile(runPaths(dir).inbox).read();
    expect(before.map((e) => e.commandId)).toEqual(["codex:initialize"]); // nothing written under a held lock
    fs.rmSync(lock);
    touch(go);

    expect(await bridge.waitExit()).toBe(0);
    const initialize = JSON.parse(before[0]?.line ?? "null");
    const answer = { id: 7, error: { code: -32601, message: "runner-bridge does not handle tools/call" } };
    const received = (line: unknown) => JSON.stringify({ type: "agent.received", line });
    expect(await t.api.runnerEvents(run.id)).toEqual([
      { sourceSeq: 1, type: "rpc/request", data: request },
      { sourceSeq: 2, type: "TEXT_MESSAGE_CONTENT", data: { delta: received(initialize) } },
      { sourceSeq: 3, type: "TEXT_MESSAGE_CONTENT", data: { delta: received(answer) } },
    ]);
  });
});
