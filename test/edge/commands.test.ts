import { describe, expect, it } from "vitest";
import { allEvents, call, createRun, getRun, json } from "./helpers.ts";
import { claim } from "./sockets.ts";

const post = (runId: string, body: unknown) => call(`/v1/runs/${runId}/commands`, { method: "POST", json: body });

describe("commands", () => {
  it("are idempotent by commandId and refuse the same id with a different body", async () => {
    const { run } = await createRun();
    const created = await json(await post(run.id, { commandId: "in-1", type: "input", text: "hello" }), 201);
    expect(created.command).toMatchObject({
      commandId: "in-1",
      controllerSeq: 1,
      type: "input",
      text: "hello",
      state: "queued",
    });
    const repeat = await json(await post(run.id, { commandId: "in-1", type: "input", text: "hello" }), 200);
    expect(repeat.command).toEqual(created.command);
    const conflict = await json(await post(run.id, { commandId: "in-1", type: "input", text: "bye" }), 409);
    expect(conflict.error.code).toBe("conflict");
    expect((await allEvents(run.id)).filter((e) => e.type === "command.queued")).toHaveLength(1);
  });

  it("rejects malformed commands with 422 and stores nothing", async () => {
    const { run } = await createRun();
    for (const body of [
      { commandId: "x", type: "input" },
      { commandId: "", type: "interrupt" },
      { commandId: "x", type: "explode" },
      { type: "interrupt" },
    ]) {
      expect((await json(await post(run.id, body), 422)).error.code).toBe("invalid_body");
    }
    expect(await allEvents(run.id)).toHaveLength(1);
  });

  it("queued before any runner, they are delivered in the claim, then acked applied", async () => {
    const { run, runnerToken } = await createRun();
    await json(await post(run.id, { commandId: "early", type: "input", text: "first" }), 201);
    const { runner, claimed, epoch } = await claim(run.id, runnerToken);
    expect(claimed.commands).toEqual([
      {
        type: "command",
        controllerSeq: 1,
        commandId: "early",
        kind: "input",
        state: "queued",
        text: "first",
        generation: 1,
      },
    ]);
    runner.send({ type: "commandAck", epoch, controllerSeq: 1, commandId: "early", state: "applied" });
    await runner.settle();
    const repeat = await json(await post(run.id, { commandId: "early", type: "input", text: "first" }), 200);
    expect(repeat.command.state).toBe("applied");
    const acked = (await allEvents(run.id)).filter((e) => e.type === "command.acked");
    expect(acked.map((e) => e.data)).toEqual([{ commandId: "early", controllerSeq: 1, state: "applied" }]);
  });

  it("reach a connected runner at once", async () => {
    const { run, runnerToken } = await createRun();
    const { runner } = await claim(run.id, runnerToken);
    const created = await json(await post(run.id, { commandId: "live", type: "interrupt" }), 201);
    expect(created.command.state).toBe("delivered");
    expect(await runner.next("command")).toEqual({
      type: "command",
      controllerSeq: 1,
      commandId: "live",
      kind: "interrupt",
      state: "delivered",
      generation: 1,
    });
  });

  it("delivered but unacked before a takeover, they come back as unknown and are re-sent on every claim", async () => {
    const { run, runnerToken } = await createRun();
    const first = await claim(run.id, runnerToken, "first");
    await json(await post(run.id, { commandId: "maybe-ran", type: "input", text: "rm -rf build" }), 201);
    await first.runner.next("command");
    const second = await claim(run.id, runnerToken, "second");
    expect(second.claimed.commands).toEqual([
      {
        type: "command",
        controllerSeq: 1,
        commandId: "maybe-ran",
        kind: "input",
        state: "unknown",
        text: "rm -rf build",
        generation: 1,
      },
    ]);
    const record = await json(await post(run.id, { commandId: "maybe-ran", type: "input", text: "rm -rf build" }), 200);
    expect(record.command.state).toBe("unknown");
    const third = await claim(run.id, runnerToken, "third");
    expect(third.claimed.commands.map((c: { commandId: string; state: string }) => [c.commandId, c.state])).toEqual([
      ["maybe-ran", "unknown"],
    ]);
    third.runner.send({
      type: "commandAck",
      epoch: third.epoch,
      controllerSeq: 1,
      commandId: "maybe-ran",
      state: "applied",
    });
    await third.runner.settle();
    const fourth = await claim(run.id, runnerToken, "fourth");
    expect(fourth.claimed.commands).toEqual([]);
  });

  it("an ack for an unknown command or from a fenced epoch changes nothing", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    await json(await post(run.id, { commandId: "c1", type: "interrupt" }), 201);
    runner.send({ type: "commandAck", epoch, controllerSeq: 9, commandId: "c1", state: "applied" });
    expect((await runner.next("error")).code).toBe("not_found");
    runner.send({ type: "commandAck", epoch, controllerSeq: 1, commandId: "c1", state: "applied" });
    await runner.settle();
    runner.send({ type: "commandAck", epoch, controllerSeq: 1, commandId: "c1", state: "rejected" });
    expect((await runner.next("error")).code).toBe("conflict");
    expect((await json(await post(run.id, { commandId: "c1", type: "interrupt" }), 200)).command.state).toBe("applied");
  });

  it("a terminal run takes no new commands", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    expect((await json(await post(run.id, { commandId: "late", type: "interrupt" }), 409)).error.code).toBe(
      "terminal_run",
    );
  });
});

describe("cancel", () => {
  it("with no runner attached, cancels at once", async () => {
    const { run } = await createRun();
    const response = await json(await call(`/v1/runs/${run.id}/cancel`, { method: "POST" }), 202);
    expect(response.run.status).toBe("cancelled");
    expect(response.run.outcome.status).toBe("cancelled");
    const again = await json(await call(`/v1/runs/${run.id}/cancel`, { method: "POST" }), 200);
    expect(again.run.status).toBe("cancelled");
  });

  it("with a runner attached, sends it a cancel and waits for its outcome", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const response = await json(
      await call(`/v1/runs/${run.id}/cancel`, { method: "POST", json: { reason: "user asked" } }),
      202,
    );
    expect(response.run.status).toBe("running");
    const command = await runner.next("command");
    expect(command).toMatchObject({ kind: "cancel", commandId: "~cancel", reason: "user asked" });
    runner.send({
      type: "commandAck",
      epoch,
      controllerSeq: command.controllerSeq,
      commandId: command.commandId,
      state: "applied",
    });
    runner.send({ type: "complete", epoch, outcome: { status: "cancelled", exitCode: 143 } });
    await runner.next("completed");
    expect(await getRun(run.id)).toMatchObject({
      status: "cancelled",
      outcome: { status: "cancelled", exitCode: 143 },
    });
  });

  it("a finished run cannot be cancelled", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    expect((await json(await call(`/v1/runs/${run.id}/cancel`, { method: "POST" }), 409)).error.code).toBe(
      "terminal_run",
    );
  });
});
