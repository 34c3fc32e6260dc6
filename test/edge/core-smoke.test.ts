import { describe, expect, it } from "vitest";
import { allEvents, createRun, getRun } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

describe("smoke", () => {
  it("a runner claims, streams and completes", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    expect(epoch).toBe(1);
    runner.send({ type: "events", epoch, events: [agentEvent(1), agentEvent(2)] });
    expect((await runner.next("ack")).highestSourceSeq).toBe(2);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded", exitCode: 0 } });
    expect((await runner.next("completed")).status).toBe("succeeded");
    expect((await getRun(run.id)).status).toBe("succeeded");
    const types = (await allEvents(run.id)).map((e) => e.type);
    expect(types).toEqual(["run.created", "run.claimed", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "run.finished"]);
  });
});
