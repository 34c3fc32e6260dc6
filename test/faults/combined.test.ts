import { describe, expect, it } from "vitest";
import { attachArgs, type BridgeProcess } from "../bridge/harness/bridge.ts";
import { marker, touch, useEdge } from "../bridge/harness/context.ts";
import { waitFor } from "../support/wait.ts";
import { sleep } from "./support/chaos.ts";
import { reportFigures } from "./support/figures.ts";
import { Operator } from "./support/operator.ts";
import { AckWatch } from "./support/frame-tap.ts";
import { useFaultScene } from "./support/scene.ts";
import { faultRandom, replayable } from "./support/seed.ts";
import { expectExactRun, printedTranscript, receivedByAgent, streamAgent } from "./support/transcripts.ts";
import type { ReconnectingViewer } from "./support/viewer.ts";

// Every kind of fault in one run, in a seeded random order: the bridge killed with kill -9 and a
// successor attached, the edge killed with kill -9 and restarted, and bursts of connection cuts.
// Just before each fault an operator sends the agent an input, so each fault may catch a command
// in flight: delivered and not yet acked, or acked and not yet written.

const FILE = "test/faults/combined.test.ts";
const KINDS = ["bridge kill -9", "edge kill -9", "connection cuts"] as const;
type Fault = (typeof KINDS)[number];

const t = useEdge();
const scene = useFaultScene();

describe("bridge kills, edge crashes and connection cuts in one run", () => {
  it("in a seeded random order, the run succeeds with the exact transcript, every viewer sees each event once, every input reaches the agent once", async () => {
    const random = faultRandom("combined faults");
    await replayable(random, FILE, async () => {
      // Each kind at least once, plus two more of any kind, shuffled.
      const faults: Fault[] = random.shuffle([
        ...KINDS,
        KINDS[random.int(0, KINDS.length - 1)] as Fault,
        KINDS[random.int(0, KINDS.length - 1)] as Fault,
      ]);
      const sizes = Array.from({ length: faults.length + 1 }, () => random.int(60, 140));
      const gates = sizes.map((_, i) => (i === 0 ? null : marker(`segment-${i}`)));
      const agent = streamAgent({
        segments: sizes.map((lines, i) => ({ lines, everyMs: 4, ...(gates[i] ? { gate: gates[i] } : {}) })),
        expectStdin: faults.length,
        graceMs: 500,
      });
      const acks = new AckWatch();
      const proxy = await scene.proxy(t.edge.port, { onServerData: acks.feed });
      const started = await t.startRun({ edgeUrl: proxy.url, agent: agent.command });
      const { run, viewerToken, runnerToken, dir } = started;
      const viewers: ReconnectingViewer[] = [];
      for (const name of ["v1", "v2"]) {
        viewers.push(scene.viewer({ base: proxy.url, runId: run.id, token: viewerToken, name }).start());
      }

      const operator = new Operator(proxy.url);
      const inputs: Array<{ commandId: string; text: string }> = [];
      let bridge: BridgeProcess = started.bridge;
      const bridges = [bridge];
      let cuts = 0;
      let base = 0;
      for (const [i, fault] of faults.entries()) {
        if (i > 0) touch(gates[i] as string);
        const size = sizes[i] as number;
        const point = base + random.int(1, size - 10);
        await waitFor(
          `the edge to acknowledge sourceSeq ${point} (before fault ${i + 1}: ${fault})`,
          () => acks.highest >= point,
          60_000,
          2,
        );
        const input = { commandId: `input-${i + 1}`, text: `before the ${fault}` };
        await operator.expectAccepted("POST", `/v1/runs/${run.id}/commands`, { ...input, type: "input" });
        inputs.push(input);
        if (fault === "bridge kill -9") {
          await bridge.kill9();
          bridge = t.bridge(attachArgs({ edge: proxy.url, runId: run.id, token: runnerToken, dir }));
          bridges.push(bridge);
        } else if (fault === "edge kill -9") {
          await t.edge.crash();
          await t.edge.restart();
        } else {
          const chaos = scene.chaos(proxy, random);
          await sleep(random.int(800, 2000));
          await chaos.stop();
          cuts += chaos.cuts;
        }
        base += size;
      }

      touch(gates[faults.length] as string);
      const code = await bridge.waitExit(90_000).catch(async (error: Error) => {
        const commands = (await t.api.events(run.id)).filter(
          (e) => e.type.startsWith("command.") || e.type === "run.claimed",
        );
        error.message += `\nthe bridge's stderr: ${bridge.stderr().slice(-1500)}\nthe agent received: ${JSON.stringify(receivedByAgent(agent))}\ncommands and claims in the log: ${JSON.stringify(commands.map((e) => [e.seq, e.type, e.data]))}`;
        throw error;
      });
      expect(code, `the last bridge's exit status; its stderr: ${bridge.stderr().slice(-800)}`).toBe(0);
      for (const viewer of viewers) await viewer.finished();

      const log = await expectExactRun(t.api, run.id, agent, viewers);
      const runnerIds = new Set(
        log.filter((e) => e.type === "run.claimed").map((e) => (e.data as { runnerId: string }).runnerId),
      );
      expect(runnerIds.size, "each bridge process claimed under its own runnerId").toBe(bridges.length);
      const received = receivedByAgent(agent);
      expect(received.map(({ type, commandId, text }) => ({ type, commandId, text }))).toEqual(
        inputs.map((input) => ({ type: "input", ...input })),
      );

      reportFigures("combined faults", random.seed, {
        "fault order": faults.join(" → "),
        "bridges killed": bridges.length - 1,
        "edge crashes": faults.filter((f) => f === "edge kill -9").length,
        "connections cut": cuts,
        "inputs delivered once": inputs.length,
        "runner events": printedTranscript(agent).length,
        "viewer connections": viewers.map((v) => v.connections).join("/"),
      });
    });
  });
});
