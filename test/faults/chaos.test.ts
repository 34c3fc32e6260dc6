import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { useEdge } from "../bridge/harness/context.ts";
import { sleep } from "./support/chaos.ts";
import { reportFigures } from "./support/figures.ts";
import { Operator } from "./support/operator.ts";
import { useFaultScene } from "./support/scene.ts";
import { faultRandom, replayable } from "./support/seed.ts";
import { expectExactRun, printedTranscript, receivedByAgent, streamAgent } from "./support/transcripts.ts";
import type { ReconnectingViewer } from "./support/viewer.ts";

// A flapping network: every client of the edge — the bridge, three viewers and the operator's
// HTTP requests — goes through a proxy that cuts connections at random every 50–500 ms.

const FILE = "test/faults/chaos.test.ts";
const EVENTS = 1000;
const INPUTS = 8;
const APPROVALS = 5;
const VIEWERS = 3;

const t = useEdge();
const scene = useFaultScene();

describe("connections cut at random every 50–500 ms", () => {
  it(`a ${EVENTS}-event run: the log and every viewer's transcript are exact, each command and decision reaches the agent once`, async () => {
    const random = faultRandom("network chaos");
    await replayable(random, FILE, async () => {
      const approvalsAt = new Set<number>();
      while (approvalsAt.size < APPROVALS) approvalsAt.add(random.int(50, EVENTS - 100));
      const inputsAt = Array.from({ length: INPUTS }, () => random.int(20, EVENTS - 100)).sort((a, b) => a - b);
      const decisions = [...approvalsAt].map(() => (random.chance(0.5) ? "approve" : "deny"));
      const agent = streamAgent({
        segments: [{ lines: EVENTS, everyMs: 8 }],
        approvalsAt: [...approvalsAt],
        expectStdin: INPUTS + APPROVALS,
        graceMs: 500,
      });
      const proxy = await scene.proxy(t.edge.port);
      const { run, viewerToken, bridge } = await t.startRun({ edgeUrl: proxy.url, agent: agent.command });
      const chaos = scene.chaos(proxy, random, { minMs: 50, maxMs: 500, probability: 0.75 });
      const viewers: ReconnectingViewer[] = [];
      for (let i = 1; i <= VIEWERS; i++) {
        viewers.push(scene.viewer({ base: proxy.url, runId: run.id, token: viewerToken, name: `v${i}` }));
      }
      const [first, ...others] = viewers as [ReconnectingViewer, ...ReconnectingViewer[]];
      first.start();
      const lateStart = random.int(0, 3000);
      void sleep(lateStart).then(() => {
        for (const viewer of others) viewer.start();
      });

      // The operator watches through the first viewer: inputs go out as the transcript passes
      // random points, decisions as the approval requests show up.
      const operator = new Operator(proxy.url);
      const sentInputs: Array<{ commandId: string; text: string }> = [];
      const decided = new Map<string, string>();
      const deadline = Date.now() + 120_000;
      while (sentInputs.length < INPUTS || decided.size < APPROVALS) {
        if (Date.now() > deadline) {
          throw new Error(`within 120 s only ${sentInputs.length} inputs and ${decided.size} decisions could be sent`);
        }
        const seen = first.received.filter((e) => e.source === "runner");
        const nextInput = inputsAt[sentInputs.length];
        if (nextInput !== undefined && seen.length >= nextInput) {
          const input = { commandId: `input-${sentInputs.length + 1}`, text: `input after ${nextInput} — ✓` };
          await operator.expectAccepted("POST", `/v1/runs/${run.id}/commands`, { ...input, type: "input" });
          sentInputs.push(input);
          continue;
        }
        const request = seen.find(
          (e) => e.type === "approval.requested" && !decided.has((e.data as { requestId: string }).requestId),
        );
        if (request) {
          const requestId = (request.data as { requestId: string }).requestId;
          const decision = decisions[decided.size] as string;
          await operator.expectAccepted("POST", `/v1/runs/${run.id}/approvals/${requestId}`, { decision });
          decided.set(requestId, decision);
          continue;
        }
        await sleep(25);
      }

      const code = await bridge.waitExit(120_000);
      expect(code, `the bridge's exit status; its stderr: ${bridge.stderr().slice(-800)}`).toBe(0);
      for (const viewer of viewers) await viewer.finished();
      await chaos.stop();

      const log = await expectExactRun(t.api, run.id, agent, viewers);
      expect(printedTranscript(agent)).toHaveLength(EVENTS);

      // Each command and each decision reached the agent's stdin exactly once.
      const received = receivedByAgent(agent);
      expect(received).toHaveLength(INPUTS + APPROVALS);
      const inputs = received
        .filter((line) => line.type === "input")
        .map(({ commandId, text }) => ({ commandId, text }));
      expect(inputs).toEqual(sentInputs);
      const resolved = received.filter((line) => line.type === "approval.resolved");
      expect(new Map(resolved.map((line) => [line.requestId as string, line.decision as string]))).toEqual(decided);
      expect(new Set(received.map((line) => line.commandId)).size).toBe(received.length);
      expectEachCommandQueuedOnce(log, [...sentInputs.map((i) => i.commandId)], [...decided.keys()]);

      const claims = log.filter((e) => e.type === "run.claimed").length;
      reportFigures("network chaos", random.seed, {
        "connections cut": chaos.cuts,
        "rounds of cuts": chaos.rounds,
        "runner events": EVENTS,
        "bridge claims": claims,
        "viewer connections": viewers.map((v) => v.connections).join("/"),
        "operator requests re-sent after a cut": operator.resends,
        "inputs and decisions delivered once": INPUTS + APPROVALS,
      });
    });
  });
});

/** The log holds each input once as queued and each decision once as resolved. */
function expectEachCommandQueuedOnce(log: RunEvent[], commandIds: string[], requestIds: string[]): void {
  const queued = log
    .filter((e) => e.type === "command.queued" && (e.data as { type: string }).type === "input")
    .map((e) => (e.data as { commandId: string }).commandId);
  expect(queued).toEqual(commandIds);
  const resolved = log
    .filter((e) => e.type === "approval.resolved")
    .map((e) => (e.data as { requestId: string }).requestId)
    .sort();
  expect(resolved).toEqual([...requestIds].sort());
}
