import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createRun } from "../helpers.ts";
import { advanceDispatcher, createPoolRun, mintPoolKey } from "../pool-helpers.ts";
import { agentEvent, connectRunner, openSocket, type SocketProbe, watch } from "../sockets.ts";

// The JSON Schemas served at /schemas/* against real frames: every frame a runner and a viewer
// sent in a run, and every frame the run's object sent them, captured from the sockets.

type Frame = { type: string; [key: string]: unknown };

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

beforeAll(async () => {
  for (const name of ["runner-frames.json", "viewer-frames.json", "pool-frames.json"]) {
    const response = await call(`/schemas/${name}`, { key: null });
    ajv.addSchema(await response.json(), name);
  }
});

function expectFrame(definition: string, frame: unknown): void {
  const validate = ajv.getSchema(definition);
  if (!validate) throw new Error(`no schema ${definition}`);
  if (!validate(frame)) {
    throw new Error(`${definition} refuses ${JSON.stringify(frame)}:\n${JSON.stringify(validate.errors, null, 2)}`);
  }
}

/** Everything a socket received, in order (the probe's own queue is consumed by `next`). */
function recordReceived(probe: SocketProbe): Frame[] {
  const received: Frame[] = [];
  probe.ws.addEventListener("message", (event) => {
    received.push(JSON.parse(event.data as string));
  });
  return received;
}

/** Sends through the probe and keeps a copy of what was sent. */
function recordSent(probe: SocketProbe): { send: (frame: Frame) => void; sent: Frame[] } {
  const sent: Frame[] = [];
  return {
    sent,
    send: (frame) => {
      sent.push(frame);
      probe.send(frame);
    },
  };
}

const RUNNER_OUT = "runner-frames.json#/$defs/RunnerFrame";
const RUNNER_IN = "runner-frames.json#/$defs/ServerToRunner";
const VIEWER_OUT = "viewer-frames.json#/$defs/ViewerFrame";
const VIEWER_IN = "viewer-frames.json#/$defs/ServerToViewer";

describe("the frames' JSON Schemas", () => {
  it("match every frame of a run, both ways, on the runner and the viewer socket", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const runnerProbe = await connectRunner(run.id, runnerToken);
    const runnerReceived = recordReceived(runnerProbe);
    const runner = recordSent(runnerProbe);
    runner.send({ type: "hello", runnerId: "frames-1", lastSourceSeq: 0 });
    const { epoch } = await runnerProbe.next("claimed");
    const viewerProbe = await watch(run.id, null, 0, "key-a");
    const viewerReceived = recordReceived(viewerProbe);
    const viewer = recordSent(viewerProbe);

    runner.send({
      type: "events",
      epoch,
      events: [agentEvent(1), agentEvent(2, "approval.requested", { requestId: "r1" })],
    });
    await runnerProbe.next("ack");
    runner.send({ type: "events", epoch, events: [agentEvent(1, "TEXT_MESSAGE_CONTENT", { delta: "changed" })] });
    await runnerProbe.next("conflict");
    runner.send({
      type: "events",
      epoch,
      events: [{ sourceSeq: 9, type: "RUN_ERROR", time: new Date().toISOString() }],
    });
    await runnerProbe.next("gap");
    runner.send({ type: "heartbeat", epoch });
    viewer.send({ type: "command", command: { commandId: "in-1", type: "input", text: "go on" } });
    await viewerProbe.next("commandAccepted");
    const command = await runnerProbe.next("command", (f) => f.commandId === "in-1");
    runner.send({
      type: "commandAck",
      epoch,
      controllerSeq: command.controllerSeq,
      commandId: "in-1",
      state: "applied",
    });
    viewer.send({ type: "approval", requestId: "r1", approval: { decision: "deny", reason: "no" } });
    await viewerProbe.next("approvalAccepted");
    await runnerProbe.next("command", (f) => f.kind === "approval");
    viewer.send({ type: "approval", requestId: "unknown", approval: { decision: "approve" } });
    await viewerProbe.next("error");
    runner.send({ type: "bogus" } as Frame);
    await runnerProbe.next("error");
    runner.send({
      type: "complete",
      epoch,
      outcome: { status: "failed", exitCode: 2, error: { code: "x", message: "y" } },
    });
    await runnerProbe.next("completed");
    await viewerProbe.next("end");

    // A runner that says hello to the finished run is rejected; one fenced by a newer claim, below.
    const late = await connectRunner(run.id, runnerToken);
    const lateReceived = recordReceived(late);
    late.send({ type: "hello", runnerId: "frames-2" });
    await late.next("rejected");

    const other = await createRun();
    const first = await connectRunner(other.run.id, other.runnerToken);
    const firstReceived = recordReceived(first);
    first.send({ type: "hello", runnerId: "frames-3" });
    await first.next("claimed");
    const second = await connectRunner(other.run.id, other.runnerToken);
    second.send({ type: "hello", runnerId: "frames-4" });
    await first.next("fenced");

    for (const frame of runner.sent.filter((f) => f.type !== "bogus")) expectFrame(RUNNER_OUT, frame);
    for (const frame of [...runnerReceived, ...lateReceived, ...firstReceived]) expectFrame(RUNNER_IN, frame);
    for (const frame of viewer.sent) expectFrame(VIEWER_OUT, frame);
    for (const frame of viewerReceived) expectFrame(VIEWER_IN, frame);

    const types = (frames: Frame[]) => [...new Set(frames.map((f) => f.type))].sort();
    expect(types(runner.sent)).toEqual(["bogus", "commandAck", "complete", "events", "heartbeat", "hello"]);
    expect(types([...runnerReceived, ...lateReceived, ...firstReceived])).toEqual(
      ["ack", "claimed", "command", "completed", "conflict", "error", "fenced", "gap", "rejected"].sort(),
    );
    expect(types(viewer.sent)).toEqual(["approval", "command"]);
    expect(types(viewerReceived)).toEqual(
      ["approvalAccepted", "commandAccepted", "end", "error", "events", "status"].sort(),
    );
    for (const probe of [runnerProbe, viewerProbe, late, first, second]) probe.close();
  });

  it.each<[string, Frame]>([
    ["a hello without runnerId", { type: "hello" }],
    ["a hello with a field the protocol does not have", { type: "hello", runnerId: "r", extra: 1 }],
    ["an unknown type", { type: "bogus" }],
    ["an empty batch", { type: "events", epoch: 1, events: [] }],
    ["an event without sourceSeq", { type: "events", epoch: 1, events: [{ type: "X" }] }],
    ["an outcome the runner may not report", { type: "complete", epoch: 1, outcome: { status: "timed_out" } }],
  ])("refuse what the runner socket refuses: %s", async (_name, frame) => {
    const { run, runnerToken } = await createRun();
    const runner = await connectRunner(run.id, runnerToken);
    runner.send(frame);
    expect((await runner.next("error")).code).toBe("invalid_frame");
    expect(() => expectFrame(RUNNER_OUT, frame)).toThrow(/refuses/);
    runner.close();
  });

  it.each<[string, Frame]>([
    ["a command of an unknown type", { type: "command", command: { commandId: "c", type: "bogus" } }],
    ["an approval without a decision", { type: "approval", requestId: "r", approval: {} }],
    ["a command with an extra field", { type: "command", command: { commandId: "c", type: "interrupt" }, x: 1 }],
  ])("refuse what the viewer socket refuses: %s", async (_name, frame) => {
    const { run } = await createRun();
    const viewer = await openSocket(`/v1/runs/${run.id}/watch`, null, "key-a");
    viewer.send(frame);
    expect((await viewer.next("error")).code).toBe("invalid_frame");
    expect(() => expectFrame(VIEWER_OUT, frame)).toThrow(/refuses/);
    viewer.close();
  });
});

describe("the pool socket's JSON Schema", () => {
  it("matches every frame of a pool host and its dispatcher: hello, welcome, assign, accepted, revoke, declined, released, error", async () => {
    const { key } = await mintPoolKey();
    const queue = `frames-${crypto.randomUUID().slice(0, 8)}`;
    const host = await openSocket(`/v1/pools/connect?queue=${queue}`, null, key);
    const received = recordReceived(host);
    const { send, sent } = recordSent(host);
    send({ type: "hello", hostId: "frames-host", slots: 2, profiles: ["demo"], labels: ["gpu"], running: [] });
    await host.next("welcome");
    const { run } = await createPoolRun({ queue });
    const first = await host.next("assign");
    send({ type: "accepted", assignmentId: first.assignmentId });
    send({ type: "heartbeat" });
    send({ type: "released", assignmentId: first.assignmentId, runId: run.id, exitCode: null });
    await advanceDispatcher(0, queue);
    await host.next("revoke");
    const second = await host.next("assign");
    send({ type: "declined", assignmentId: second.assignmentId, reason: "no room after all" });
    send({ type: "accepted", assignmentId: "unknown" });
    await host.next("error");
    expect(received.map((frame) => frame.type)).toEqual(["welcome", "assign", "revoke", "assign", "error"]);
    for (const frame of sent) expectFrame("pool-frames.json#/$defs/PoolHostFrame", frame);
    for (const frame of received) expectFrame("pool-frames.json#/$defs/PoolEdgeFrame", frame);
    host.close();
  });
});
