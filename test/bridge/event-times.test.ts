import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { readPid, runPaths } from "../../runner-bridge/src/rundir.ts";
import { waitFor } from "../support/wait.ts";
import { alive, journalLines } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";

const t = useEdge();
const GAP_MS = 150;

describe("event times after an outage", () => {
  it("events journaled while no bridge was attached keep the agent's times beside their arrival time", async () => {
    const paused = marker("paused");
    const go = marker("go");
    const started = await t.startRun({
      agent: t.agent([
        { out: "before" },
        { touch: paused },
        { waitFile: go },
        { out: "while detached 1" },
        { sleepMs: GAP_MS },
        { out: "while detached 2" },
        { sleepMs: GAP_MS },
        { out: "while detached 3" },
      ]),
    });
    const { run, dir } = started;
    await waitFor("the first event to be stored", async () => (await t.api.runnerEvents(run.id)).length === 1);
    await waitFor("the agent to pause", () => fs.existsSync(paused));
    await started.bridge.kill9();
    const agentPid = readPid(runPaths(dir).agentPid) as number;
    touch(go);
    await waitFor("the orphaned agent to finish its journal", () => journalLines(dir).length === 4 && !alive(agentPid));
    const attachedAt = Date.now();
    const successor = t.attach(started);
    expect(await successor.waitExit()).toBe(0);

    const runner = (await t.api.events(run.id)).filter((e) => e.source === "runner");
    expect(runner.map((e) => e.sourceSeq)).toEqual([1, 2, 3, 4]);
    const agentTimes = runner.map((e) => Date.parse(e.agentTime ?? "missing"));
    const arrived = runner.map((e) => Date.parse(e.time));
    for (const [i, event] of runner.entries()) {
      expect(event.agentTime, `sourceSeq ${event.sourceSeq}`).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(agentTimes[i]).toBeLessThanOrEqual(arrived[i] as number);
    }
    // The three detached lines arrived after the successor started, yet keep when they were written.
    for (const i of [1, 2, 3]) {
      expect(arrived[i]).toBeGreaterThanOrEqual(attachedAt - 5);
      expect(agentTimes[i]).toBeLessThan(attachedAt);
    }
    expect((agentTimes[2] as number) - (agentTimes[1] as number)).toBeGreaterThanOrEqual(GAP_MS - 5);
    expect((agentTimes[3] as number) - (agentTimes[2] as number)).toBeGreaterThanOrEqual(GAP_MS - 5);
  });
});
