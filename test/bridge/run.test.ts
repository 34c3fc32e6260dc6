import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readPid, runPaths } from "../../runner-bridge/src/rundir.ts";
import { alive, runArgs } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";
import { waitFor } from "../support/wait.ts";

const t = useEdge();

describe("1. a full run", () => {
  it("stores the agent's output element for element and ends succeeded", async () => {
    const { run, runnerToken } = await t.api.createRun();
    const dir = t.runDir();
    const output = [
      '{"type":"RUN_STARTED","threadId":"t1"}',
      "plain text from the agent",
      '{"type":"tool.call","name":"ls","args":{"path":"."}}',
      "[1,2,3]",
      '{"no":"type"}',
      '{"type":42}',
      "",
      '{"__exit":0}',
      '{"type":"RUN_FINISHED"}',
    ];
    const bridge = t.bridge(
      runArgs({
        edge: t.edge.url,
        runId: run.id,
        token: runnerToken,
        dir,
        agent: t.agent(output.map((out) => ({ out }))),
      }),
    );
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual([
      { sourceSeq: 1, type: "RUN_STARTED", data: { threadId: "t1" } },
      { sourceSeq: 2, type: "TEXT_MESSAGE_CONTENT", data: { delta: "plain text from the agent" } },
      { sourceSeq: 3, type: "tool.call", data: { name: "ls", args: { path: "." } } },
      { sourceSeq: 4, type: "TEXT_MESSAGE_CONTENT", data: { delta: "[1,2,3]" } },
      { sourceSeq: 5, type: "TEXT_MESSAGE_CONTENT", data: { delta: '{"no":"type"}' } },
      { sourceSeq: 6, type: "TEXT_MESSAGE_CONTENT", data: { delta: '{"type":42}' } },
      { sourceSeq: 7, type: "TEXT_MESSAGE_CONTENT", data: { delta: "" } },
      // an agent's own look-alike of the exit sentinel is ordinary data
      { sourceSeq: 8, type: "TEXT_MESSAGE_CONTENT", data: { delta: '{"__exit":0}' } },
      { sourceSeq: 9, type: "RUN_FINISHED", data: {} },
    ]);
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("succeeded");
    expect(final.outcome).toEqual({ status: "succeeded", exitCode: 0 });
    expect(final.highestSourceSeq).toBe(9);
  });

  it("reports a non-zero exit as failed with the tail of the agent's stderr", async () => {
    const { run, bridge } = await t.startRun({
      agent: t.agent([{ out: "working" }, { stderr: "fatal: disk on fire" }, { exit: 3 }]),
    });
    expect(await bridge.waitExit()).toBe(0);
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("failed");
    expect(final.outcome?.exitCode).toBe(3);
    expect(final.outcome?.error?.code).toBe("agent_exit");
    expect(final.outcome?.error?.message).toContain("fatal: disk on fire");
    expect(await t.api.runnerEvents(run.id)).toEqual([
      { sourceSeq: 1, type: "TEXT_MESSAGE_CONTENT", data: { delta: "working" } },
    ]);
  });
});

describe("large output", () => {
  it("streams more than one batch and truncates a line too large for a frame, deterministically", async () => {
    const { run, runnerToken } = await t.api.createRun();
    const dir = t.runDir();
    const huge = "x".repeat(300_000);
    const steps = [{ out: huge }, ...Array.from({ length: 1200 }, (_, i) => ({ out: `{"type":"tick","i":${i}}` }))];
    const bridge = t.bridge(
      runArgs({ edge: t.edge.url, runId: run.id, token: runnerToken, dir, agent: t.agent(steps) }),
    );
    expect(await bridge.waitExit()).toBe(0);
    const events = await t.api.runnerEvents(run.id);
    expect(events).toHaveLength(1201);
    expect(events[0]).toEqual({
      sourceSeq: 1,
      type: "TEXT_MESSAGE_CONTENT",
      data: { delta: huge.slice(0, 256 * 1024), truncated: true, length: 300_000 },
    });
    expect(events.slice(1)).toEqual(
      Array.from({ length: 1200 }, (_, i) => ({ sourceSeq: i + 2, type: "tick", data: { i } })),
    );
    expect((await t.api.getRun(run.id)).status).toBe("succeeded");
  });
});

describe("8. cleanup and secrets", () => {
  it("deletes the journal files after the terminal ack and never writes an --env value anywhere", async () => {
    const secret = `sk-live-${randomUUID()}`;
    const { run, runnerToken } = await t.api.createRun();
    const dir = t.runDir();
    const paused = marker("paused");
    const go = marker("go");
    const bridge = t.bridge(
      runArgs({
        edge: t.edge.url,
        runId: run.id,
        token: runnerToken,
        dir,
        extra: ["--env", "SECRET_TOKEN"],
        agent: t.agent([
          { envReport: ["SECRET_TOKEN", "NOT_PASSED"] },
          { stderr: "agent diagnostics without the secret" },
          { touch: paused },
          { waitFile: go },
          { out: "done" },
        ]),
      }),
      { env: { SECRET_TOKEN: secret, NOT_PASSED: "only the bridge has this" } },
    );
    await waitFor("the agent to pause mid-run", () => fs.existsSync(paused));
    await waitFor("the env report to be stored", async () => (await t.api.runnerEvents(run.id)).length === 1);

    // Mid-run: every file of the run and every command line involved is free of the secret.
    const paths = runPaths(dir);
    const files = fs.readdirSync(dir);
    expect(files).toEqual(expect.arrayContaining(["journal.ndjson", "spec.json", "stderr.log"]));
    for (const f of files) expect(fs.readFileSync(path.join(dir, f), "utf8"), f).not.toContain(secret);
    const pids = [bridge.pid, readPid(paths.supervisorPid), readPid(paths.agentPid)];
    for (const pid of pids) {
      expect(pid).not.toBeNull();
      expect(fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")).not.toContain(secret);
    }

    touch(go);
    expect(await bridge.waitExit()).toBe(0);
    expect(fs.existsSync(dir)).toBe(false);

    const events = await t.api.runnerEvents(run.id);
    expect(events).toEqual([
      {
        sourceSeq: 1,
        type: "env.report",
        data: { vars: { SECRET_TOKEN: createHash("sha256").update(secret).digest("hex"), NOT_PASSED: null } },
      },
      { sourceSeq: 2, type: "TEXT_MESSAGE_CONTENT", data: { delta: "done" } },
    ]);
    const everything = JSON.stringify([await t.api.events(run.id), await t.api.getRun(run.id)]);
    expect(everything).not.toContain(secret);
    expect(bridge.stdout() + bridge.stderr()).not.toContain(secret);
    expect((await t.api.getRun(run.id)).status).toBe("succeeded");
    for (const pid of pids) expect(alive(pid as number)).toBe(false);
  });
});
