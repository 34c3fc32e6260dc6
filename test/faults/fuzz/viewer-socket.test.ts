import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { watch } from "../../edge/sockets.ts";
import { KEY_A } from "../../edge/helpers.ts";
import { type Fixture, makeFixture } from "./fixture.ts";
import { answers, describeMessage, idText, MARKERS, messages, render } from "./frames.ts";
import { mutatedObject, nastyNumber, nastyString } from "./nasty.ts";
import { expectUnchanged, FuzzTally, fuzz, fuzzSeed, storedRun } from "./oracle.ts";

// Fuzzing the viewer socket in the Workers runtime: generated command, approval and ack frames, and
// everything else, from a viewer that may interact (an API key) and from one that may not (a
// plain viewer token), which must be refused whatever it sends.

const RUNS = 1_100;
const tally = new FuzzTally();
const seed = fuzzSeed("the viewer socket");
afterAll(() => tally.report("the viewer socket", seed));

const command = fc.oneof(
  fc.record(
    {
      commandId: fc.oneof(fc.constantFrom("queued-1", "c-1"), idText),
      type: fc.constantFrom("input", "interrupt", "cancel"),
      text: fc.oneof(fc.string({ maxLength: 20 }), nastyString),
    },
    { requiredKeys: ["commandId", "type"] },
  ),
  mutatedObject({
    commandId: idText,
    type: fc.constantFrom("input", "interrupt", "cancel", "INPUT", ""),
    text: nastyString,
  }),
);
const approval = fc.oneof(
  fc.record({ decision: fc.constantFrom("approve", "deny") }),
  mutatedObject({ decision: fc.constantFrom("approve", "deny", "maybe", ""), reason: nastyString }),
);
const requestId = fc.oneof(fc.constant("req-1"), idText);
/** An ack: the seq a viewer says it holds, from any viewer; it is never answered unless refused. */
const seq = fc.oneof(fc.nat({ max: 20 }), fc.constant(Number.MAX_SAFE_INTEGER), nastyNumber);
const shaped = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant("command"), command }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("approval"), requestId, approval }) },
  { weight: 2, arbitrary: mutatedObject({ type: fc.constant("command"), command }) },
  { weight: 2, arbitrary: mutatedObject({ type: fc.constant("approval"), requestId, approval }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("ack"), seq }) },
  { weight: 1, arbitrary: mutatedObject({ type: fc.constant("ack"), seq }) },
  {
    weight: 1,
    arbitrary: mutatedObject({ type: fc.constantFrom("events", "status", "hello", "Command", ""), command }),
  },
);

const input = fc.record({ interacting: fc.boolean(), message: messages(shaped) });

/** The fixture run and a viewer socket of each kind on it. */
async function sockets(fixture: Fixture) {
  return {
    interacting: await watch(fixture.runId, null, 0, KEY_A),
    readOnly: await watch(fixture.runId, fixture.viewerToken),
  };
}

describe("fuzzing the viewer socket", () => {
  it(`${RUNS} generated frames: never an internal error, every refusal documented, nothing stored by a refusal`, async () => {
    let fixture = await makeFixture();
    let viewers = await sockets(fixture);
    let baseline = await storedRun(fixture.runId);
    await fuzz(seed, RUNS, input, async ({ interacting, message }) => {
      const probe = interacting ? viewers.interacting : viewers.readOnly;
      const what = `${interacting ? "interacting" : "read-only"} viewer frame ${describeMessage(message)}`;
      probe.ws.send(render(message, {}, 1));
      // What the viewer hears about the run itself (events, status) is not an answer.
      const got = (await answers(probe, MARKERS.viewer, tally, what)).filter(
        (f) => f.type !== "events" && f.type !== "status",
      );
      tally.inputs++;
      const accepted = got.some((f) => f.type === "commandAccepted" || f.type === "approvalAccepted");
      if (!interacting && accepted) throw new Error(`${what}: a read-only viewer's frame was accepted`);
      const errors = got.filter((f) => f.type === "error");
      if (!accepted && errors.length > 0) {
        tally.refused++;
        for (const f of errors) tally.refusal(f.code);
        baseline = await expectUnchanged(fixture.runId, baseline, what);
      } else {
        tally.accepted++;
        baseline = await storedRun(fixture.runId);
      }
      // A decided approval or a cancel moves the run on: start over on a fresh one.
      if ((baseline.record as { status: string }).status !== "waiting" || tally.inputs % 250 === 0) {
        viewers.interacting.close();
        viewers.readOnly.close();
        fixture.runner.close();
        fixture = await makeFixture();
        viewers = await sockets(fixture);
        baseline = await storedRun(fixture.runId);
      }
    });
    expect(tally.inputs).toBe(RUNS);
    expect(tally.internalFrames).toBe(0);
  });
});
