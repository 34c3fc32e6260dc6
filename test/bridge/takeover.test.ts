import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { readPid, runPaths } from "../../runner-bridge/src/rundir.ts";
import { alive, journalLines } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";
import { custom, textLine } from "./harness/ndjson-events.ts";
import { waitFor } from "../support/wait.ts";

const t = useEdge();

const SIX = [
  custom(1, "step", { n: 1 }),
  textLine(2, "two"),
  custom(3, "step", { n: 3 }),
  textLine(4, "four"),
  custom(5, "step", { n: 5 }),
  textLine(6, "six"),
];
function sixStepAgent(paused: string, go: string) {
  return t.agent([
    { out: '{"type":"step","n":1}' },
    { out: "two" },
    { out: '{"type":"step","n":3}' },
    { touch: paused },
    { waitFile: go },
    { out: "four" },
    { out: '{"type":"step","n":5}' },
    { out: "six" },
  ]);
}

describe("takeover after the bridge is killed", () => {
  it("kill -9 mid-stream, the agent keeps journaling, attach stores exactly the agent's 6 events at epoch 2", async () => {
    const paused = marker("paused");
    const go = marker("go");
    const started = await t.startRun({ agent: sixStepAgent(paused, go) });
    const { run, dir, bridge: first } = started;
    await waitFor("the first three events to be stored", async () => (await t.api.runnerEvents(run.id)).length === 3);
    await waitFor("the agent to pause", () => fs.existsSync(paused));

    await first.kill9();
    const agentPid = readPid(runPaths(dir).agentPid) as number;
    expect(alive(agentPid)).toBe(true); // the agent outlives its bridge
    touch(go);
    await waitFor("the orphaned agent to finish its journal", () => journalLines(dir).length === 6 && !alive(agentPid));
    expect(await t.api.runnerEvents(run.id)).toEqual(SIX.slice(0, 3));

    const successor = t.attach(started);
    expect(await successor.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual(SIX);
    const final = await t.api.getRun(run.id);
    expect(final.epoch).toBe(2);
    expect(final.status).toBe("succeeded");
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe("two bridges at once", () => {
  it("the later claim wins; the earlier stores nothing more, cannot terminalize, and exits 2", async () => {
    const paused = marker("paused");
    const go = marker("go");
    const started = await t.startRun({ body: { timeouts: { heartbeatMs: 3000 } }, agent: sixStepAgent(paused, go) });
    const { run, bridge: earlier } = started;
    await waitFor("the first three events to be stored", async () => (await t.api.runnerEvents(run.id)).length === 3);
    await waitFor("the agent to pause", () => fs.existsSync(paused));

    const later = t.attach(started);
    expect(await earlier.waitExit()).toBe(2);
    expect(earlier.stderr()).toContain("fenced");
    expect((await t.api.getRun(run.id)).epoch).toBe(2);

    // The agent keeps going; only the later bridge streams and finishes it.
    touch(go);
    expect(await later.waitExit()).toBe(0);
    const events = await t.api.events(run.id);
    const claim2 = events.find((e) => e.type === "run.claimed" && e.epoch === 2);
    expect(claim2).toBeDefined();
    const afterClaim = events.filter((e) => e.seq > (claim2?.seq ?? 0));
    expect(afterClaim.every((e) => e.epoch === 2)).toBe(true);
    expect(afterClaim.map((e) => e.type)).not.toContain("error");
    expect(
      events.filter((e) => e.source === "runner").map((e) => ({ sourceSeq: e.sourceSeq, type: e.type, data: e.data })),
    ).toEqual(SIX);
    expect(events.find((e) => e.type === "run.finished")?.epoch).toBe(2); // terminalized by the later bridge
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("succeeded");
    expect(final.epoch).toBe(2);
  });
});
