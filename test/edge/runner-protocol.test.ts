import { describe, expect, it } from "vitest";
import { runInDurableObject } from "cloudflare:test";
import { RUN_MIGRATIONS } from "../../src/objects/run-schema.ts";
import { waitFor } from "../support/wait.ts";
import { allEvents, call, createRun, expectGapless, getRun, json, runnerTranscript, runObject } from "./helpers.ts";
import { agentEvent, claim, connectRunner } from "./sockets.ts";

describe("claims", () => {
  it("each hello claims the next epoch and fences the previous runner", async () => {
    const { run, runnerToken } = await createRun();
    const first = await claim(run.id, runnerToken, "bridge-a");
    expect(first.claimed).toMatchObject({ epoch: 1, ackedSourceSeq: 0, commands: [] });
    first.runner.send({ type: "events", epoch: 1, events: [agentEvent(1), agentEvent(2)] });
    await first.runner.next("ack");

    const second = await claim(run.id, runnerToken, "bridge-b");
    expect(second.claimed).toMatchObject({ epoch: 2, ackedSourceSeq: 2 });
    expect(await first.runner.next("fenced")).toEqual({ type: "fenced", epoch: 2 });
    expect((await first.runner.waitClosed()).code).toBe(4001);
    expect(await getRun(run.id)).toMatchObject({
      status: "running",
      epoch: 2,
      runner: { id: "bridge-b", connected: true },
    });
  });

  it("a stale epoch stores nothing, not even an error event, and the sender is fenced", async () => {
    const { run, runnerToken } = await createRun();
    const old = await claim(run.id, runnerToken, "old");
    old.runner.send({ type: "events", epoch: 1, events: [agentEvent(1)] });
    await old.runner.next("ack");
    const fresh = await claim(run.id, runnerToken, "new");
    const before = await allEvents(run.id);

    // A socket that still claims epoch 1 on a fresh connection (it never saw the fence).
    const zombie = await connectRunner(run.id, runnerToken);
    zombie.send({ type: "events", epoch: 1, events: [agentEvent(2, "TEXT_MESSAGE_CONTENT", { delta: "zombie" })] });
    expect((await zombie.next("error")).code).toBe("not_claimed");
    fresh.runner.send({ type: "events", epoch: 1, events: [agentEvent(2)] });
    expect(await fresh.runner.next("fenced")).toEqual({ type: "fenced", epoch: 2 });
    expect(await allEvents(run.id)).toEqual(before);
    expect((await getRun(run.id)).highestSourceSeq).toBe(1);
  });

  it("a runner reconnecting with the epoch it held is fenced if a successor claimed since", async () => {
    const { run, runnerToken } = await createRun();
    const original = await claim(run.id, runnerToken, "original");
    original.runner.close();
    await claim(run.id, runnerToken, "successor");
    const returning = await connectRunner(run.id, runnerToken);
    returning.send({ type: "hello", runnerId: "original", epoch: original.epoch });
    expect(await returning.next("fenced")).toEqual({ type: "fenced", epoch: 2 });
    expect((await returning.waitClosed()).code).toBe(4001);
    expect(await getRun(run.id)).toMatchObject({ epoch: 2, runner: { id: "successor", connected: true } });
  });

  it("a runner reconnecting with the current epoch claims the next one", async () => {
    const { run, runnerToken } = await createRun();
    const original = await claim(run.id, runnerToken, "original");
    original.runner.close();
    const returning = await connectRunner(run.id, runnerToken);
    returning.send({ type: "hello", runnerId: "original", epoch: 1 });
    expect((await returning.next("claimed")).epoch).toBe(2);
  });

  it("a runner whose claimed frame was lost to a cut gets a new claim, not fenced by its own claim", async () => {
    const { run, runnerToken } = await createRun();
    const first = await claim(run.id, runnerToken, "bridge-r");
    first.runner.close();
    await loseClaimedFrame(run.id, runnerToken, "bridge-r", first.epoch);
    const returning = await connectRunner(run.id, runnerToken);
    returning.send({ type: "hello", runnerId: "bridge-r", epoch: first.epoch });
    expect(await returning.next("claimed")).toMatchObject({ epoch: 3 });
    expect(await getRun(run.id)).toMatchObject({ epoch: 3, status: "running", runner: { id: "bridge-r" } });
  });

  it("another runner reconnecting with that old epoch is fenced", async () => {
    const { run, runnerToken } = await createRun();
    const first = await claim(run.id, runnerToken, "bridge-r");
    first.runner.close();
    await loseClaimedFrame(run.id, runnerToken, "bridge-r", first.epoch);
    const other = await connectRunner(run.id, runnerToken);
    other.send({ type: "hello", runnerId: "bridge-s", epoch: first.epoch });
    expect(await other.next("fenced")).toEqual({ type: "fenced", epoch: 2 });
    expect((await other.waitClosed()).code).toBe(4001);
    expect(await getRun(run.id)).toMatchObject({ epoch: 2, runner: { id: "bridge-r" } });
  });

  it("a claim on a terminal run is rejected and leaves the epoch unchanged", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    const late = await connectRunner(run.id, runnerToken);
    late.send({ type: "hello", runnerId: "late" });
    expect(await late.next("rejected")).toEqual({ type: "rejected", reason: "terminal-run", status: "succeeded" });
    expect((await late.waitClosed()).code).toBe(4002);
    expect(await getRun(run.id)).toMatchObject({ epoch: 1, status: "succeeded" });
  });

  it("answers the attach preflight for a runner token without upgrading", async () => {
    const { run, runnerToken } = await createRun();
    const status = await json(await call(`/v1/runs/${run.id}/runner`, { key: runnerToken }), 200);
    expect(status).toEqual({ runId: run.id, status: "queued", epoch: 0 });
  });
});

describe("event dispositions", () => {
  it("skips a resent event with identical content and stores what follows it", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1), agentEvent(2)] });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 2 });
    runner.send({ type: "events", epoch, events: [agentEvent(1), agentEvent(2), agentEvent(3)] });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 3 });
    expect(await runnerTranscript(run.id)).toEqual(
      [1, 2, 3].map((n) => [n, "TEXT_MESSAGE_CONTENT", { delta: `chunk ${n}` }]),
    );
    expectGapless(await allEvents(run.id));
  });

  it("stops at a stored sourceSeq resent with other content: conflict, then the ack of what was stored", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    await runner.next("ack");
    runner.send({
      type: "events",
      epoch,
      events: [agentEvent(2), agentEvent(1, "TEXT_MESSAGE_CONTENT", { delta: "other" }), agentEvent(3)],
    });
    expect(await runner.next("conflict")).toEqual({ type: "conflict", sourceSeq: 1 });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 2 });
    expect(await runnerTranscript(run.id)).toEqual(
      [1, 2].map((n) => [n, "TEXT_MESSAGE_CONTENT", { delta: `chunk ${n}` }]),
    );
  });

  it("stops at a gap: gap with the expected sourceSeq, then the ack of what was stored", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1), agentEvent(3), agentEvent(4)] });
    expect(await runner.next("gap")).toEqual({ type: "gap", expected: 2 });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 1 });
    expect(await runnerTranscript(run.id)).toEqual([[1, "TEXT_MESSAGE_CONTENT", { delta: "chunk 1" }]]);
    expectGapless(await allEvents(run.id));
  });

  it("judges repeats inside one batch against the events earlier in that batch", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({
      type: "events",
      epoch,
      events: [agentEvent(1), agentEvent(1), agentEvent(2), agentEvent(2, "OTHER"), agentEvent(3)],
    });
    expect(await runner.next("conflict")).toEqual({ type: "conflict", sourceSeq: 2 });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 2 });
    expect(await runnerTranscript(run.id)).toEqual(
      [1, 2].map((n) => [n, "TEXT_MESSAGE_CONTENT", { delta: `chunk ${n}` }]),
    );
  });

  it("acks the highest contiguous sourceSeq when batches arrive as 1, 3, 2", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    expect((await runner.next("ack")).highestSourceSeq).toBe(1);
    runner.send({ type: "events", epoch, events: [agentEvent(3)] });
    expect(await runner.next("gap")).toEqual({ type: "gap", expected: 2 });
    expect((await runner.next("ack")).highestSourceSeq).toBe(1);
    runner.send({ type: "events", epoch, events: [agentEvent(2)] });
    expect((await runner.next("ack")).highestSourceSeq).toBe(2);
    runner.send({ type: "events", epoch, events: [agentEvent(3)] });
    expect((await runner.next("ack")).highestSourceSeq).toBe(3);
    expect((await runnerTranscript(run.id)).map(([sourceSeq]) => sourceSeq)).toEqual([1, 2, 3]);
  });

  it("a successor replaying the journal from line 1 adds only what is new", async () => {
    const { run, runnerToken } = await createRun();
    const first = await claim(run.id, runnerToken, "first");
    first.runner.send({ type: "events", epoch: 1, events: [1, 2, 3].map((n) => agentEvent(n)) });
    await first.runner.next("ack");
    const second = await claim(run.id, runnerToken, "second");
    expect(second.claimed.ackedSourceSeq).toBe(3);
    second.runner.send({ type: "events", epoch: 2, events: [1, 2, 3, 4, 5, 6].map((n) => agentEvent(n)) });
    expect((await second.runner.next("ack")).highestSourceSeq).toBe(6);
    const transcript = await runnerTranscript(run.id);
    expect(transcript).toEqual([1, 2, 3, 4, 5, 6].map((n) => [n, "TEXT_MESSAGE_CONTENT", { delta: `chunk ${n}` }]));
    const epochs = (await allEvents(run.id)).filter((e) => e.source === "runner").map((e) => e.epoch);
    expect(epochs).toEqual([1, 1, 1, 2, 2, 2]);
  });

  it("keeps seq gapless while commands and runner batches interleave", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const writes: Promise<unknown>[] = [];
    for (let batch = 0; batch < 10; batch++) {
      runner.send({
        type: "events",
        epoch,
        events: Array.from({ length: 10 }, (_, i) => agentEvent(batch * 10 + i + 1)),
      });
      writes.push(
        call(`/v1/runs/${run.id}/commands`, {
          method: "POST",
          json: { commandId: `c${batch}`, type: "input", text: `t${batch}` },
        }),
      );
    }
    await Promise.all(writes);
    await runner.next("ack", (f) => f.highestSourceSeq === 100);
    const events = await allEvents(run.id);
    expectGapless(events);
    expect(events.filter((e) => e.source === "runner").map((e) => e.sourceSeq)).toEqual(
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    expect(events.filter((e) => e.type === "command.queued")).toHaveLength(10);
  });
});

describe("completion", () => {
  it("is idempotent for the same outcome and refuses a different one", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const outcome = { status: "failed", exitCode: 2, error: { code: "agent_exit", message: "boom" } };
    runner.send({ type: "complete", epoch, outcome });
    expect(await runner.next("completed")).toEqual({ type: "completed", status: "failed" });
    runner.send({ type: "complete", epoch, outcome });
    expect(await runner.next("completed")).toEqual({ type: "completed", status: "failed" });
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded", exitCode: 0 } });
    expect((await runner.next("error")).code).toBe("outcome_conflict");
    const record = await getRun(run.id);
    expect(record).toMatchObject({ status: "failed", outcome });
    expect((await allEvents(run.id)).filter((e) => e.type === "run.finished")).toHaveLength(1);
  });

  it("a fenced runner cannot terminalize the run", async () => {
    const { run, runnerToken } = await createRun();
    const loser = await claim(run.id, runnerToken, "loser");
    const winner = await claim(run.id, runnerToken, "winner");
    loser.runner.send({ type: "complete", epoch: 1, outcome: { status: "succeeded" } });
    await loser.runner.waitClosed();
    const viaFreshSocket = await connectRunner(run.id, runnerToken);
    viaFreshSocket.send({ type: "complete", epoch: 1, outcome: { status: "succeeded" } });
    expect((await viaFreshSocket.next("error")).code).toBe("not_claimed");
    await winner.runner.settle();
    expect(await getRun(run.id)).toMatchObject({ status: "running", epoch: 2, outcome: null });
    winner.runner.send({ type: "events", epoch: 2, events: [agentEvent(1)] });
    expect((await winner.runner.next("ack")).highestSourceSeq).toBe(1);
  });

  it("terminal runs take no more events", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    const before = await allEvents(run.id);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    expect((await runner.next("error")).code).toBe("terminal_run");
    expect(await allEvents(run.id)).toEqual(before);
  });
});

describe("malformed frames", () => {
  it.each([
    ["not JSON", "{{{", "invalid_json"],
    ["an unknown frame type", { type: "teleport" }, "invalid_frame"],
    ["events without an epoch", { type: "events", events: [agentEvent(1)] }, "invalid_frame"],
    ["an event with sourceSeq 0", { type: "events", epoch: 1, events: [agentEvent(0)] }, "invalid_frame"],
    ["an empty batch", { type: "events", epoch: 1, events: [] }, "invalid_frame"],
    [
      "a frame over 1 MiB",
      { type: "events", epoch: 1, events: [agentEvent(1, "T", { blob: "x".repeat(1024 * 1024) })] },
      "payload_too_large",
    ],
  ])("%s gets an error frame, stores nothing and keeps the socket open", async (_name, frame, code) => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const before = await allEvents(run.id);
    runner.send(frame);
    const error = await runner.next("error");
    expect(error.code).toBe(code);
    expect(typeof error.message).toBe("string");
    expect(await allEvents(run.id)).toEqual(before);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    expect((await runner.next("ack")).highestSourceSeq).toBe(1);
  });
});

/** An events frame, as text, whose one event's data is `{"a":{"a":…1…}}` nested `depth` levels. */
function deepEventFrame(epoch: number, sourceSeq: number, depth: number): string {
  const data = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
  return `{"type":"events","epoch":${epoch},"events":[{"sourceSeq":${sourceSeq},"type":"TEXT_MESSAGE_CONTENT","data":${data}}]}`;
}

describe("hostile frames", () => {
  it("an event whose data nests 20,000 levels is refused at validation, and the run's reads keep working", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const before = await allEvents(run.id);
    const frame = deepEventFrame(epoch, 1, 20_000);
    expect(frame.length).toBeGreaterThan(100 * 1024);
    runner.send(frame);
    expect((await runner.next("error")).code).toBe("invalid_frame");
    expect(await allEvents(run.id)).toEqual(before);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    expect((await runner.next("ack")).highestSourceSeq).toBe(1);
    expect(await runnerTranscript(run.id)).toEqual([[1, "TEXT_MESSAGE_CONTENT", { delta: "chunk 1" }]]);
  });

  it("resending a stored sourceSeq with deeply nested data gets an answer and changes nothing", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    await runner.next("ack");
    const before = await allEvents(run.id);
    runner.send(deepEventFrame(epoch, 1, 20_000));
    expect((await runner.next("error")).code).toBe("invalid_frame");
    expect(await allEvents(run.id)).toEqual(before);
  });

  it("a frame whose handling fails unexpectedly gets an internal error frame, and its transaction stores nothing", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const before = await allEvents(run.id);
    // A fault the code cannot expect: the approvals table is gone when an approval request arrives.
    await runInDurableObject(runObject(run.id), (_instance, state) => state.storage.sql.exec("DROP TABLE approvals"));
    runner.send({
      type: "events",
      epoch,
      events: [agentEvent(1), agentEvent(2, "approval.requested", { requestId: "r1" })],
    });
    expect(await runner.next("error")).toMatchObject({ code: "internal" });
    expect(await allEvents(run.id)).toEqual(before);
    await runInDurableObject(runObject(run.id), (_instance, state) =>
      state.storage.sql.exec(RUN_MIGRATIONS[0]!.sql as string),
    );
    expect((await getRun(run.id)).highestSourceSeq).toBe(0);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    expect((await runner.next("ack")).highestSourceSeq).toBe(1);
  });
});

/**
 * `runnerId` reconnects holding `heldEpoch` and says hello, and its socket drops before it reads
 * `claimed`: the edge has committed the next claim, the runner never learns it.
 */
async function loseClaimedFrame(runId: string, runnerToken: string, runnerId: string, heldEpoch: number) {
  const cut = await connectRunner(runId, runnerToken);
  cut.send({ type: "hello", runnerId, epoch: heldEpoch });
  cut.close();
  await waitFor(
    `the claim after epoch ${heldEpoch} to commit`,
    async () => (await getRun(runId)).epoch > heldEpoch,
    5_000,
  );
}
