import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { allEvents, createRun, runObject } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

describe("socket attachments are checked when read back", () => {
  it("a runner socket whose attachment no longer reads as one stores nothing and is answered with an error", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    const before = await allEvents(run.id);
    // What an older version (or a corrupted store) might have left: a runner role with no epoch.
    // An object reads an attachment from the runtime once per socket, so it is evicted (the socket
    // hibernated) to read this one as a new version's object would.
    await runInDurableObject(runObject(run.id), (_instance, state) => {
      for (const ws of state.getWebSockets()) ws.serializeAttachment({ role: "runner", epoch: "1" });
    });
    await evictDurableObject(runObject(run.id), { webSockets: "hibernate" });
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    expect(await runner.next("error")).toMatchObject({ code: "invalid_frame" });
    expect(await allEvents(run.id)).toEqual(before);
  });
});
