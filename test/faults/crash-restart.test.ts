import { describe, expect, it } from "vitest";
import type { RunEvent, RunRecord } from "../../src/protocol/index.ts";
import type { Api } from "../support/api.ts";
import { marker, touch, useEdge } from "../bridge/harness/context.ts";
import { waitFor } from "../support/wait.ts";
import { reportFigures } from "./support/figures.ts";
import { AckWatch } from "./support/frame-tap.ts";
import { RawRunner } from "./support/raw-runner.ts";
import { useFaultScene } from "./support/scene.ts";
import { faultRandom, replayable } from "./support/seed.ts";
import {
  expectEpochChain,
  expectGapless,
  expectViewerSawLog,
  printedTranscript,
  runnerTranscript,
  streamAgent,
} from "./support/transcripts.ts";

// The edge itself dies: kill -9 of the whole wrangler/workerd process group, then a restart on the
// same port and the same persisted state, while a real runner-bridge streams and a viewer watches.

const FILE = "test/faults/crash-restart.test.ts";
const CRASHES = 5;
const t = useEdge();
const scene = useFaultScene();

async function snapshot(api: Api, runId: string): Promise<{ log: RunEvent[]; run: RunRecord }> {
  return { log: await api.events(runId), run: await api.getRun(runId) };
}

describe("the edge is killed with kill -9 mid-stream and restarted on its state", () => {
  it(`at ${CRASHES} random points: everything acknowledged survives, the bridge and a viewer carry on by themselves, the run ends exact`, async () => {
    const random = faultRandom("edge crash and restart");
    await replayable(random, FILE, async () => {
      // One agent segment per crash point and one after the last; each starts when its gate opens.
      const sizes = Array.from({ length: CRASHES + 1 }, () => random.int(60, 160));
      const gates = sizes.map((_, i) => (i === 0 ? null : marker(`segment-${i}`)));
      const agent = streamAgent({
        segments: sizes.map((lines, i) => ({ lines, everyMs: 4, ...(gates[i] ? { gate: gates[i] } : {}) })),
      });
      // What the edge acknowledged, read off the wire between the bridge and the edge.
      const acks = new AckWatch();
      const proxy = await scene.proxy(t.edge.port, { onServerData: acks.feed });
      const { run, viewerToken, bridge } = await t.startRun({ edgeUrl: proxy.url, agent: agent.command });
      const viewer = scene.viewer({ base: t.edge.url, runId: run.id, token: viewerToken, name: "v1" }).start();

      let base = 0;
      const ackedAtCrash: number[] = [];
      const inFlight: number[] = [];
      for (let i = 0; i < CRASHES; i++) {
        if (i > 0) touch(gates[i] as string);
        const size = sizes[i] as number;
        const point = base + random.int(1, size - 10);
        await waitFor(
          `the edge to acknowledge sourceSeq ${point} (crash point ${i + 1})`,
          () => acks.highest >= point,
          30_000,
          2,
        );
        const before = await snapshot(t.api, run.id);
        const ackedBeforeCrash = acks.highest;
        await t.edge.crash();
        ackedAtCrash.push(ackedBeforeCrash);
        inFlight.push(printedTranscript(agent).length - ackedBeforeCrash);
        await t.edge.restart();

        const after = await snapshot(t.api, run.id);
        const where = `after crash ${i + 1} (acknowledged up to sourceSeq ${ackedBeforeCrash})`;
        expect(after.log.slice(0, before.log.length), `${where}: the log read before the crash`).toEqual(before.log);
        expect(after.run.highestSourceSeq, `${where}: highestSourceSeq`).toBeGreaterThanOrEqual(ackedBeforeCrash);
        expect(runnerTranscript(after.log).slice(0, ackedBeforeCrash), `${where}: acknowledged events`).toEqual(
          printedTranscript(agent).slice(0, ackedBeforeCrash),
        );
        expectGapless(after.log, where);
        expectEpochChain(after.log);
        expect(after.run.epoch, `${where}: epoch`).toBeGreaterThanOrEqual(before.run.epoch);
        expect(after.run.status, `${where}: status`).toBe(before.run.status);
        // Nobody tells the bridge the edge is back: it reconnects and is claimed again on its own.
        await waitFor(
          `the bridge to claim the run again by itself ${where}`,
          async () => (await t.api.getRun(run.id)).epoch > before.run.epoch,
          20_000,
        );
        base += size;
      }

      touch(gates[CRASHES] as string);
      const code = await bridge.waitExit(60_000);
      expect(code, `the bridge's exit status; its stderr: ${bridge.stderr().slice(-800)}`).toBe(0);
      const final = await snapshot(t.api, run.id);
      expect(final.run.status).toBe("succeeded");
      const printed = printedTranscript(agent);
      expect(printed).toHaveLength(sizes.reduce((a, b) => a + b, 0));
      expect(runnerTranscript(final.log)).toEqual(printed);
      expectGapless(final.log);
      expectEpochChain(final.log);
      const claims = final.log.filter((e) => e.type === "run.claimed");
      expect(claims.length).toBeGreaterThanOrEqual(CRASHES + 1);
      const runnerIds = new Set(claims.map((e) => (e.data as { runnerId: string }).runnerId));
      expect(runnerIds.size, "one bridge process carried the run through every crash").toBe(1);

      await viewer.finished();
      expectViewerSawLog(viewer, final.log, "succeeded");
      expect(viewer.connections).toBeGreaterThan(CRASHES);

      reportFigures("edge crash and restart", random.seed, {
        "crash points survived": ackedAtCrash.length,
        "acknowledged sourceSeq at each crash": ackedAtCrash.join("/"),
        "printed but unacknowledged at each crash": inFlight.join("/"),
        "events stored": final.log.length,
        "bridge claims": claims.length,
        "viewer connection attempts": viewer.connections,
      });
    });
  });

  it("deadlines set before the crash (claim timeout, lease expiry, approval expiry) fire after the restart", async () => {
    const DEADLINE_MS = 4000;
    const claim = await t.api.createRun({ timeouts: { claimMs: DEADLINE_MS } });
    // Lost with its runner: recovering after the takeover window, failed once recoverMs passes too.
    const lease = await t.api.createRun({ timeouts: { heartbeatMs: DEADLINE_MS, takeoverMs: 1000, recoverMs: 1000 } });
    scene.runner(await RawRunner.claim(t.edge.url, lease.run.id, lease.runnerToken, "lease-runner"));
    const approval = await t.api.createRun({ timeouts: { approvalMs: DEADLINE_MS } });
    const asking = scene.runner(
      await RawRunner.claim(t.edge.url, approval.run.id, approval.runnerToken, "approval-runner"),
    );
    const request = { sourceSeq: 1, type: "approval.requested", data: { requestId: "deploy" } };
    asking.send({ type: "events", epoch: 1, events: [request] });
    await asking.next("ack");

    const leaseRun = await t.api.getRun(lease.run.id);
    const approvalRun = await t.api.getRun(approval.run.id);
    const due = {
      claim: Date.parse(claim.run.createdAt) + DEADLINE_MS,
      lease: Date.parse(leaseRun.runner?.leaseExpiresAt ?? ""),
      approval: Date.parse(approvalRun.pendingApprovals[0]?.expiresAt ?? ""),
    };
    expect(approvalRun.status).toBe("waiting");
    const crashAt = Date.now();
    await t.edge.crash();
    for (const [name, at] of Object.entries(due))
      expect(at, `${name} deadline is after the crash`).toBeGreaterThan(crashAt);
    await t.edge.restart();

    // Watched through the tenant's run list, which does not wake the runs' objects: the alarms
    // have to ring on their own.
    const expected = { [claim.run.id]: "timed_out", [lease.run.id]: "failed", [approval.run.id]: "running" };
    await waitFor(
      "the claim, lease and approval deadlines to change their runs' statuses after the restart",
      async () => {
        const list = (await t.api.request("GET", "/v1/runs?limit=200")).body as {
          runs: Array<{ runId: string; status: string }>;
        };
        return Object.entries(expected).every(
          ([id, status]) => list.runs.find((r) => r.runId === id)?.status === status,
        );
      },
      30_000,
      200,
    );

    expect((await t.api.getRun(claim.run.id)).outcome?.error?.code).toBe("claim_timeout");
    const timedOut = (await t.api.events(claim.run.id)).find((e) => e.type === "run.finished") as RunEvent;
    expect(Date.parse(timedOut.time)).toBeGreaterThanOrEqual(due.claim);
    const leaseLog = await t.api.events(lease.run.id);
    expect(leaseLog.map((e) => e.type)).toEqual([
      "run.created",
      "run.claimed",
      "run.stalled",
      "run.recovering",
      "run.finished",
    ]);
    expect((await t.api.getRun(lease.run.id)).outcome?.error?.code).toBe("runner_lost");
    const stalled = leaseLog.find((e) => e.type === "run.stalled") as RunEvent;
    expect(Date.parse(stalled.time)).toBeGreaterThanOrEqual(due.lease);

    const approvalLog = await t.api.events(approval.run.id);
    const expired = approvalLog.find((e) => e.type === "approval.expired") as RunEvent;
    expect(expired.data).toEqual({ requestId: "deploy", decision: "deny", reason: "approval_timeout" });
    expect(Date.parse(expired.time)).toBeGreaterThanOrEqual(due.approval);
    expect((await t.api.getRun(approval.run.id)).pendingApprovals).toEqual([]);
    // The deny waits for the next runner, which gets it with its claim.
    const successor = scene.runner(
      await RawRunner.claim(t.edge.url, approval.run.id, approval.runnerToken, "successor"),
    );
    expect(successor.claimed.commands).toEqual([
      expect.objectContaining({ kind: "approval", requestId: "deploy", decision: "deny" }),
    ]);
    const fired = [timedOut, stalled, expired].filter((e) => Date.parse(e.time) > crashAt);
    reportFigures("deadlines across a crash", null, { "deadlines fired after the restart": fired.length });
  });
});
