import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readPid, runPaths } from "../../runner-bridge/src/rundir.ts";
import { alive } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";
import { custom, textLine } from "./harness/ndjson-events.ts";
import { waitFor } from "../support/wait.ts";

const t = useEdge();

describe("a full run", () => {
  it("stores the agent's output element for element and ends succeeded", async () => {
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
    const { run, bridge } = await t.startRun({ agent: t.agent(output.map((out) => ({ out }))) });
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual([
      { sourceSeq: 1, type: "RUN_STARTED", data: { threadId: "t1" } },
      textLine(2, "plain text from the agent"),
      custom(3, "tool.call", { name: "ls", args: { path: "." } }),
      textLine(4, "[1,2,3]"),
      textLine(5, '{"no":"type"}', 4),
      textLine(6, '{"type":42}', 4),
      textLine(7, "", 4),
      // an agent's own look-alike of the exit sentinel is ordinary data
      textLine(8, '{"__exit":0}', 4),
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
    expect(await t.api.runnerEvents(run.id)).toEqual([textLine(1, "working")]);
  });
});

describe("large output", () => {
  it("streams 1,200 events, more than one batch, in order", async () => {
    const steps = Array.from({ length: 1200 }, (_, i) => ({ out: `{"type":"tick","i":${i}}` }));
    const { run, bridge } = await t.startRun({ agent: t.agent(steps) });
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual(
      Array.from({ length: 1200 }, (_, i) => custom(i + 1, "tick", { i })),
    );
    expect((await t.api.getRun(run.id)).status).toBe("succeeded");
  });

  it("turns a line over 256 KiB into a truncated text event, and goes on after it", async () => {
    const huge = "x".repeat(300_000);
    const { run, bridge } = await t.startRun({ agent: t.agent([{ out: huge }, { out: "next" }]) });
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual([
      {
        sourceSeq: 1,
        type: "TEXT_MESSAGE_CHUNK",
        data: {
          messageId: "line-1",
          role: "assistant",
          delta: `${huge.slice(0, 256 * 1024)}\n`,
          metadata: { truncated: true, length: 300_000 },
        },
      },
      textLine(2, "next", 1),
    ]);
  });
});

describe("secrets", () => {
  it("an --env value reaches the agent and nothing else: no file, command line, event or log line", async () => {
    const secret = `sk-live-${randomUUID()}`;
    const paused = marker("paused");
    const go = marker("go");
    const { run, dir, bridge } = await t.startRun({
      extra: ["--env", "SECRET_TOKEN"],
      env: { SECRET_TOKEN: secret, NOT_PASSED: "only the bridge has this" },
      agent: t.agent([
        { envReport: ["SECRET_TOKEN", "NOT_PASSED"] },
        { stderr: "agent diagnostics without the secret" },
        { touch: paused },
        { waitFile: go },
        { out: "done" },
      ]),
    });
    await waitFor(
      "the agent to pause after its env report was stored",
      async () => fs.existsSync(paused) && (await t.api.runnerEvents(run.id)).length === 1,
    );

    // Mid-run: every file of the run and every command line involved is free of the secret.
    const paths = runPaths(dir);
    const files = fs.readdirSync(dir);
    expect(files).toEqual(expect.arrayContaining(["journal.ndjson", "spec.json", "stderr.log"]));
    for (const f of files) expect(fs.readFileSync(path.join(dir, f), "utf8"), f).not.toContain(secret);
    for (const pid of [bridge.pid, readPid(paths.supervisorPid), readPid(paths.agentPid)]) {
      expect(pid).not.toBeNull();
      expect(fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")).not.toContain(secret);
    }

    touch(go);
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual([
      custom(1, "env.report", {
        vars: { SECRET_TOKEN: createHash("sha256").update(secret).digest("hex"), NOT_PASSED: null },
      }),
      textLine(2, "done"),
    ]);
    expect(JSON.stringify([await t.api.events(run.id), await t.api.getRun(run.id)])).not.toContain(secret);
    expect(bridge.stdout() + bridge.stderr()).not.toContain(secret);
  });
});

describe("cleanup", () => {
  it("after the terminal ack the run directory is gone and no process of the run is left", async () => {
    const paused = marker("paused");
    const go = marker("go");
    const { run, dir, bridge } = await t.startRun({
      agent: t.agent([{ touch: paused }, { waitFile: go }, { out: "done" }]),
    });
    await waitFor("the agent to pause", () => fs.existsSync(paused));
    const paths = runPaths(dir);
    const pids = [bridge.pid, readPid(paths.supervisorPid), readPid(paths.agentPid)];
    expect(pids.every((pid) => pid !== null && alive(pid))).toBe(true);

    touch(go);
    expect(await bridge.waitExit()).toBe(0);
    expect((await t.api.getRun(run.id)).status).toBe("succeeded");
    expect(fs.existsSync(dir)).toBe(false);
    for (const pid of pids) expect(alive(pid as number), `pid ${pid}`).toBe(false);
  });
});
