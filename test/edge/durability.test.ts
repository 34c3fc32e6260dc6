import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { allEvents, call, createRun, getRun, json, runObject } from "./helpers.ts";
import { agentEvent, claim, watch } from "./sockets.ts";

describe("state survives eviction", () => {
  it("the log, epoch, commands and deadlines are all still there after the object is evicted", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [1, 2, 3].map((n) => agentEvent(n)) });
    await runner.next("ack");
    await json(
      await call(`/v1/runs/${run.id}/commands`, {
        method: "POST",
        json: { commandId: "keep", type: "input", text: "x" },
      }),
      201,
    );
    const before = { log: await allEvents(run.id), run: await getRun(run.id) };

    await evictDurableObject(runObject(run.id), { webSockets: "close" });

    const after = await getRun(run.id);
    expect(await allEvents(run.id)).toEqual(before.log);
    expect(after).toMatchObject({ epoch: 1, lastSeq: before.run.lastSeq, highestSourceSeq: 3, status: "running" });
    const successor = await claim(run.id, runnerToken, "after-eviction");
    expect(successor.claimed).toMatchObject({ epoch: 2, ackedSourceSeq: 3 });
    expect(successor.claimed.commands.map((c: { commandId: string; state: string }) => [c.commandId, c.state])).toEqual(
      [["keep", "unknown"]],
    );
  });

  it("hibernated sockets keep working after eviction", async () => {
    const { run, runnerToken, viewerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const viewer = await watch(run.id, viewerToken, 0);
    await viewer.next("status");
    await evictDurableObject(runObject(run.id), { webSockets: "hibernate" });
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    expect((await runner.next("ack")).highestSourceSeq).toBe(1);
    const frame = await viewer.next("events", (f) => f.events.some((e: { sourceSeq?: number }) => e.sourceSeq === 1));
    expect(frame.events.map((e: { type: string }) => e.type)).toEqual(["TEXT_MESSAGE_CONTENT"]);
  });
});
