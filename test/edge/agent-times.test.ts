import { describe, expect, it } from "vitest";
import { allEvents, createRun } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

describe("an event's agent time", () => {
  it("is kept as agentTime beside the arrival time; a duplicate does not change it, a bad one is left out", async () => {
    const { run, runnerToken } = await createRun();
    const { runner } = await claim(run.id, runnerToken, "bridge-a");
    const written = ["2026-01-02T03:04:05.006Z", "2026-01-02T03:04:05.906Z"];
    const before = Date.now();
    runner.send({
      type: "events",
      epoch: 1,
      events: [
        { ...agentEvent(1), time: written[0] },
        { ...agentEvent(2), time: written[1] },
        { ...agentEvent(3), time: "yesterday-ish" },
        { ...agentEvent(4), time: "+010000-01-01T00:00:00.000Z" },
        agentEvent(5),
      ],
    });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 5 });
    // A successor's resend of line 1 with another time is a duplicate: the first time stays.
    runner.send({ type: "events", epoch: 1, events: [{ ...agentEvent(1), time: "2030-01-01T00:00:00.000Z" }] });
    await runner.next("ack");

    const stored = (await allEvents(run.id)).filter((e) => e.source === "runner");
    expect(stored.map((e) => [e.sourceSeq, e.agentTime])).toEqual([
      [1, written[0]],
      [2, written[1]],
      [3, undefined],
      [4, undefined],
      [5, undefined],
    ]);
    for (const event of stored.slice(2)) expect(Object.keys(event)).not.toContain("agentTime");
    for (const event of stored) {
      expect(Date.parse(event.time)).toBeGreaterThanOrEqual(before - 1000); // arrival, not the agent's time
    }
  });
});
