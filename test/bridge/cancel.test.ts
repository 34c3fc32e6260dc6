import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { alive } from "./harness/bridge.ts";
import { marker, useEdge } from "./harness/context.ts";
import { waitFor } from "../support/wait.ts";

const t = useEdge();

async function startTreeAgent(runBody: Record<string, unknown> = {}) {
  const pidFile = marker("pids");
  const { run, dir, bridge } = await t.startRun({
    body: runBody,
    agent: t.agent([{ spawnTree: pidFile }, { out: "ready" }, { sleepForever: true }]),
  });
  await waitFor("the agent to be running and streaming", async () => (await t.api.runnerEvents(run.id)).length === 1);
  const [agentPid, grandchildPid] = fs.readFileSync(pidFile, "utf8").split(" ").map(Number) as [number, number];
  expect(alive(agentPid)).toBe(true);
  expect(alive(grandchildPid)).toBe(true);
  return { run, dir, bridge, agentPid, grandchildPid };
}

describe("cancel and the run deadline", () => {
  it("cancel kills the whole process tree (a grandchild that ignores SIGTERM too) and ends cancelled", async () => {
    const { run, dir, bridge, agentPid, grandchildPid } = await startTreeAgent();
    await t.api.cancel(run.id);
    expect(await bridge.waitExit()).toBe(0);
    expect(alive(agentPid)).toBe(false);
    expect(alive(grandchildPid)).toBe(false);
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("cancelled");
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("the run deadline arrives as a cancel and ends the run timed_out with nothing left running", async () => {
    const { run, dir, bridge, agentPid, grandchildPid } = await startTreeAgent({ timeouts: { runMs: 4000 } });
    expect(await bridge.waitExit(30_000)).toBe(0);
    expect(alive(agentPid)).toBe(false);
    expect(alive(grandchildPid)).toBe(false);
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("timed_out");
    expect(fs.existsSync(dir)).toBe(false);
  });
});
