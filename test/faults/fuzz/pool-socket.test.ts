import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { call, json } from "../../edge/helpers.ts";
import { connectHost, createPoolRun, mintPoolKey } from "../../edge/pool-helpers.ts";
import type { SocketProbe } from "../../edge/sockets.ts";
import { answers, describeMessage, idText, messages, render } from "./frames.ts";
import { mutatedObject, nastyNumber, nastyString } from "./nasty.ts";
import { FuzzTally, fuzz, fuzzSeed } from "./oracle.ts";

// Fuzzing the pool socket in the Workers runtime: a welcomed host sends generated frames of its
// own types, broken in every field, and anything else. Each must be answered by an error frame of
// a documented code or taken quietly, the socket stays open, and a refused frame changes neither
// the queue nor the run the host holds.

const RUNS = 600;
const QUEUE = "fuzz-pool";
const tally = new FuzzTally();
const seed = fuzzSeed("the pool socket");
afterAll(() => tally.report("the pool socket", seed));

const assignmentId = fc.oneof(fc.constant("{assignment}"), idText);
const runId = fc.oneof(fc.constant("{run}"), idText);
const shaped = fc.oneof(
  {
    weight: 2,
    arbitrary: mutatedObject({
      type: fc.constant("hello"),
      hostId: idText,
      slots: nastyNumber,
      profiles: fc.array(fc.oneof(fc.constant("demo"), nastyString), { maxLength: 3 }),
      labels: fc.array(nastyString, { maxLength: 3 }),
    }),
  },
  {
    weight: 3,
    arbitrary: mutatedObject({ type: fc.constantFrom("accepted", "declined"), assignmentId, reason: nastyString }),
  },
  {
    weight: 3,
    // Never the held assignment: its release would make the alarm move the run while refusals are judged.
    arbitrary: mutatedObject({
      type: fc.constant("released"),
      assignmentId: idText,
      runId,
      exitCode: fc.oneof(nastyNumber, fc.constant(null)),
    }),
  },
  { weight: 1, arbitrary: mutatedObject({ type: fc.constantFrom("heartbeat", "welcome", "assign", "Hello", "") }) },
);

/** Marks the end of an answer: an `accepted` of an assignment nobody holds, refused naming it. */
const marker = (key: string) => `{"type":"accepted","assignmentId":"${key}"}`;

/** What the queue and the host's held run look like: unchanged by any refused frame. */
async function queueState(runIdHeld: string) {
  const [queue, run] = await Promise.all([
    json(await call(`/v1/queues/${QUEUE}`), 200),
    json(await call(`/v1/runs/${runIdHeld}`), 200),
  ]);
  return JSON.stringify({ queue, dispatch: run.dispatch, poolHost: run.poolHost, status: run.status });
}

describe("fuzzing the pool socket", () => {
  it(`${RUNS} generated frames: never an internal error, every refusal documented, nothing changed by a refusal`, async () => {
    const { key } = await mintPoolKey();
    // An hour's lease: a declined assignment is not offered again while the fuzzing goes on.
    await call(`/v1/queues/${QUEUE}`, { method: "PUT", json: { maxConcurrent: null, assignMs: 3_600_000 } });
    const host: SocketProbe = await connectHost(key, { hostId: "fuzz-host", slots: 1, queue: QUEUE });
    const { run } = await createPoolRun({ queue: QUEUE, timeouts: { claimMs: 86_400_000 } });
    const assign = await host.next("assign");
    let baseline = await queueState(run.id);
    await fuzz(seed, RUNS, messages(shaped), async (message) => {
      const what = `pool frame ${describeMessage(message)}`;
      const values = { assignment: assign.assignmentId, run: run.id };
      host.ws.send(render(message, values, 1));
      // Settling also refuses the marker `stale`, so every answer before it is this frame's.
      const got = await answers(host, marker, tally, what);
      tally.inputs++;
      if (host.closed) throw new Error(`${what}: the edge closed the pool socket ${JSON.stringify(host.closed)}`);
      const errors = got.filter((frame) => frame.type === "error");
      if (errors.length > 0) {
        tally.refused++;
        for (const frame of errors) tally.refusal(frame.code);
        const now = await queueState(run.id);
        if (now !== baseline) throw new Error(`${what}: refused, yet the queue changed: ${baseline} → ${now}`);
      } else {
        tally.accepted++;
        baseline = await queueState(run.id);
      }
    });
    expect(tally.inputs).toBe(RUNS);
    expect(tally.internalFrames).toBe(0);
    host.close();
  });
});
