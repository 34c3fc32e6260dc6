import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { isTerminal } from "../../../src/protocol/index.ts";
import { call, createRun } from "../../edge/helpers.ts";
import { connectRunner, type SocketProbe } from "../../edge/sockets.ts";
import { SLOW } from "./fixture.ts";
import { answers, describeMessage, idText, MARKERS, type Message, messages, render } from "./frames.ts";
import { anyJson, mutatedObject, nastyNumber, nastyString } from "./nasty.ts";
import { expectUnchanged, FuzzTally, fuzz, fuzzSeed, storedRun } from "./oracle.ts";

// Fuzzing the runner socket in the Workers runtime: generated frames on a claimed runner socket —
// every frame type with broken fields, stale and absurd epochs, sourceSeqs on and off the log's
// end, binary frames, frames over 1 MiB, batches over 500, deep nesting.

const RUNS = 1_400;
const tally = new FuzzTally();
const seed = fuzzSeed("the runner socket");
afterAll(() => tally.report("the runner socket", seed));

// Broken frames: every field of every frame type may be any JSON, missing, or out of range.
const anyEpoch = fc.oneof({ weight: 6, arbitrary: fc.constant("{epoch}") }, nastyNumber);
const anySourceSeq = fc.oneof(
  { weight: 3, arbitrary: fc.constant("{next}") },
  { weight: 2, arbitrary: fc.constant("{highest}") },
  { weight: 2, arbitrary: nastyNumber },
);
const brokenEvent = mutatedObject({ sourceSeq: anySourceSeq, type: idText, data: anyJson, time: nastyString });
const broken = fc.oneof(
  mutatedObject({ type: fc.constant("events"), epoch: anyEpoch, events: fc.array(brokenEvent, { maxLength: 4 }) }),
  mutatedObject({ type: fc.constant("hello"), runnerId: idText, epoch: anyEpoch, lastSourceSeq: nastyNumber }),
  mutatedObject({ type: fc.constant("heartbeat"), epoch: anyEpoch }),
  mutatedObject({
    type: fc.constant("commandAck"),
    epoch: anyEpoch,
    controllerSeq: fc.oneof(fc.constant("{controllerSeq}"), nastyNumber),
    commandId: fc.oneof(fc.constant("queued-1"), idText),
    state: fc.constantFrom("delivered", "applied", "rejected", "unknown", "queued"),
  }),
  mutatedObject({
    type: fc.constant("complete"),
    epoch: anyEpoch,
    outcome: mutatedObject({
      status: fc.constantFrom("succeeded", "failed", "cancelled", "timed_out", "running"),
      exitCode: nastyNumber,
      error: mutatedObject({ code: idText, message: nastyString }),
    }),
  }),
  mutatedObject({ type: fc.constantFrom("HELLO", "", "ack", "claimed", "events "), epoch: anyEpoch }),
);

// Well-formed frames the object has to judge: epochs stale, current or ahead; sourceSeqs that
// repeat (same or different content), continue, or leave a gap; acks for commands it never sent.
const epoch = fc.constantFrom("{epoch}", "{epoch}", "{epoch}", "{stale}", "{future}");
const event = fc.record(
  {
    sourceSeq: fc.oneof(fc.constantFrom("{next}", "{next}", "{highest}", "{ahead}"), fc.integer({ min: 1, max: 4 })),
    type: fc.constantFrom("T", "TEXT_MESSAGE_CONTENT", "RUN_STARTED", "approval.requested"),
    data: fc.oneof(anyJson, fc.record({ requestId: idText })),
  },
  { requiredKeys: ["sourceSeq", "type"] },
);
const wellFormed = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant("events"),
      epoch,
      events: fc.array(event, { minLength: 1, maxLength: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("heartbeat"), epoch }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("commandAck"),
      epoch,
      controllerSeq: fc.oneof(fc.constant("{controllerSeq}"), fc.integer({ min: 1, max: 3 })),
      commandId: fc.constantFrom("queued-1", "other"),
      state: fc.constantFrom("delivered", "applied", "rejected"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      { type: fc.constant("hello"), runnerId: fc.constantFrom("fuzz-runner", "intruder"), epoch },
      { requiredKeys: ["type", "runnerId"] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("complete"),
      epoch,
      outcome: fc.record({ status: fc.constantFrom("succeeded", "failed", "cancelled") }),
    }),
  },
);

const shaped = fc.oneof(wellFormed, broken);

/** The run under attack and what its runner socket holds. */
interface Target {
  runId: string;
  runnerToken: string;
  probe: SocketProbe;
  epoch: number;
  highest: number;
  controllerSeq: number;
  baseline: Awaited<ReturnType<typeof storedRun>>;
}

/** A socket that says hello on the run: the claim it got is the state the fuzzing starts from. */
async function attach(runId: string, runnerToken: string, target?: Target): Promise<Target> {
  const probe = await connectRunner(runId, runnerToken);
  probe.send({ type: "hello", runnerId: "fuzz-runner" });
  const claimed = await probe.next("claimed");
  const command = (claimed.commands as Array<{ controllerSeq: number }>)[0];
  return {
    runId,
    runnerToken,
    probe,
    epoch: claimed.epoch,
    highest: claimed.ackedSourceSeq,
    controllerSeq: command?.controllerSeq ?? target?.controllerSeq ?? 1,
    baseline: await storedRun(runId),
  };
}

/** A fresh run with one command queued, claimed, one event stored. */
async function freshTarget(): Promise<Target> {
  const { run, runnerToken } = await createRun(SLOW);
  const queued = await call(`/v1/runs/${run.id}/commands`, {
    method: "POST",
    json: { commandId: "queued-1", type: "input", text: "hi" },
  });
  expect(queued.status).toBe(201);
  const target = await attach(run.id, runnerToken);
  target.probe.send({ type: "events", epoch: target.epoch, events: [{ sourceSeq: 1, type: "RUN_STARTED" }] });
  target.highest = (await target.probe.next("ack")).highestSourceSeq;
  target.baseline = await storedRun(run.id);
  return target;
}

function send(t: Target, message: Message): void {
  const values = {
    epoch: t.epoch,
    stale: t.epoch - 1,
    future: t.epoch + 1,
    next: t.highest + 1,
    highest: Math.max(t.highest, 1),
    ahead: t.highest + 2,
    controllerSeq: t.controllerSeq,
  };
  t.probe.ws.send(render(message, values, t.epoch));
}

describe("fuzzing the runner socket", () => {
  it(`${RUNS} generated frames: never an internal error, every refusal documented, nothing stored by a refusal`, async () => {
    let t = await freshTarget();
    await fuzz(seed, RUNS, messages(shaped), async (message) => {
      const what = `runner frame ${describeMessage(message)}`;
      send(t, message);
      const got = await answers(t.probe, MARKERS.runner, tally, what);
      tally.inputs++;
      for (const frame of got) {
        if (frame.type === "claimed") [t.epoch, t.highest] = [frame.epoch, frame.ackedSourceSeq];
        if (frame.type === "ack") t.highest = frame.highestSourceSeq;
      }
      const accepted = got.some((f) => f.type === "ack" || f.type === "claimed" || f.type === "completed");
      const refusals = got.filter((f) => f.type === "error" || f.type === "fenced" || f.type === "rejected");
      if (!accepted && refusals.length > 0) {
        tally.refused++;
        for (const f of refusals) tally.refusal(f.type === "error" ? f.code : f.type);
        t.baseline = await expectUnchanged(t.runId, t.baseline, what);
      } else {
        tally.accepted++;
        t.baseline = await storedRun(t.runId);
      }
      // A fenced or rejected socket is closed: claim again, or start over once the run has ended.
      // A fresh run every 250 frames keeps each log short.
      const status = (t.baseline.record as { status: Parameters<typeof isTerminal>[0] }).status;
      if (isTerminal(status) || tally.inputs % 250 === 0) {
        t.probe.close();
        t = await freshTarget();
      } else if (t.probe.closed) {
        t = await attach(t.runId, t.runnerToken, t);
      }
    });
    expect(tally.inputs).toBe(RUNS);
    expect(tally.internalFrames).toBe(0);
  });
});
