import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CommandFile } from "../../runner-bridge/src/command-file.ts";
import { runPaths } from "../../runner-bridge/src/rundir.ts";
import { journalLines } from "./harness/bridge.ts";
import { useEdge } from "./harness/context.ts";
import { custom, nameOf, textLine } from "./harness/ndjson-events.ts";
import { waitFor } from "../support/wait.ts";

const t = useEdge();

describe("commands are applied once", () => {
  it("a command survives a bridge crash between the inbox write and the ack: the agent sees it once", async () => {
    const started = await t.startRun({
      agent: t.agent([{ out: "ready" }, { readLines: 1 }, { readLines: 1 }]),
      env: { RUNNER_BRIDGE_FAULT: "crash-after-inbox-write" },
    });
    const { run, dir, bridge: first } = started;
    await waitFor("the agent's first event to be stored", async () => (await t.api.runnerEvents(run.id)).length === 1);

    await t.api.command(run.id, { commandId: "cmd-hello", type: "input", text: "hello" });
    await first.waitExit();
    expect(first.child.signalCode).toBe("SIGKILL"); // it died between writing the inbox and acking
    const inbox = new CommandFile(runPaths(dir).inbox);
    expect(inbox.read().map((e) => e.commandId)).toEqual(["cmd-hello"]);
    await waitFor("the agent to receive the command", () => journalLines(dir).length === 2);
    const events = await t.api.events(run.id);
    expect(
      events.some((e) => e.type === "command.acked" && (e.data as { commandId?: string }).commandId === "cmd-hello"),
    ).toBe(false);

    const successor = t.attach(started);
    await waitFor("the successor to ack the predecessor's command as applied", async () =>
      (await t.api.events(run.id)).some(
        (e) =>
          e.type === "command.acked" &&
          (e.data as { commandId?: string; state?: string }).commandId === "cmd-hello" &&
          (e.data as { state?: string }).state === "applied",
      ),
    );
    expect(inbox.read().map((e) => e.commandId)).toEqual(["cmd-hello"]);

    await t.api.command(run.id, { commandId: "cmd-finish", type: "input", text: "finish" });
    expect(await successor.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual([
      textLine(1, "ready"),
      custom(2, "agent.received", { line: { type: "input", text: "hello", commandId: "cmd-hello" } }),
      custom(3, "agent.received", { line: { type: "input", text: "finish", commandId: "cmd-finish" } }),
    ]);
    expect((await t.api.getRun(run.id)).status).toBe("succeeded");
  });

  it("interrupt reaches an ndjson agent as SIGINT, once", async () => {
    const { run, bridge } = await t.startRun({
      agent: t.agent([{ ignoreSigint: true }, { out: "ready" }, { readLines: 1 }]),
    });
    await waitFor("the agent's first event to be stored", async () => (await t.api.runnerEvents(run.id)).length === 1);
    await t.api.command(run.id, { commandId: "int-1", type: "interrupt" });
    await waitFor("the agent to report the SIGINT", async () => (await t.api.runnerEvents(run.id)).length === 2);
    await t.api.command(run.id, { commandId: "in-1", type: "input", text: "bye" });
    expect(await bridge.waitExit()).toBe(0);
    expect((await t.api.runnerEvents(run.id)).map(nameOf)).toEqual([
      "TEXT_MESSAGE_CHUNK",
      "agent.sigint",
      "agent.received",
    ]);
  });
});

describe("approvals round-trip", () => {
  it("an approval requested by the agent is approved over HTTP and the agent receives the decision", async () => {
    const { run, dir, bridge } = await t.startRun({
      agent: t.agent([
        { out: '{"type":"approval.requested","requestId":"r1","action":"rm -rf build"}' },
        { readLines: 1 },
        { out: "approved work done" },
      ]),
    });
    const pending = await waitFor("approval r1 to be pending on the edge", async () => {
      const r = await t.api.getRun(run.id);
      return r.pendingApprovals.find((a) => a.requestId === "r1");
    });
    expect(pending.state).toBe("pending");

    await t.api.approve(run.id, "r1", "approve", "looks fine");
    expect(await bridge.waitExit()).toBe(0);
    const events = await t.api.runnerEvents(run.id);
    expect(events).toEqual([
      { sourceSeq: 1, type: "approval.requested", data: { requestId: "r1", action: "rm -rf build" } },
      custom(2, "agent.received", {
        line: {
          type: "approval.resolved",
          requestId: "r1",
          decision: "approve",
          reason: "looks fine",
          commandId: expect.any(String),
        },
      }),
      textLine(3, "approved work done"),
    ]);
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("succeeded");
    expect(final.pendingApprovals).toEqual([]);
    expect(fs.existsSync(path.join(dir, "inbox.ndjson"))).toBe(false);
  });
});
