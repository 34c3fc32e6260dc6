import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { runArgs } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";
import { type CutProxy, startProxy } from "./harness/proxy.ts";
import { waitFor } from "../support/wait.ts";

const t = useEdge();
let proxy: CutProxy | null = null;
afterEach(async () => {
  await proxy?.close();
  proxy = null;
});

describe("4. the connection is cut under the bridge", () => {
  it("reconnects through repeated cuts and the stored log is still exact", async () => {
    proxy = await startProxy(t.edge.port);
    const { run, runnerToken } = await t.api.createRun();
    const dir = t.runDir();
    const PHASES = 4;
    const PER_PHASE = 15;
    const gates = Array.from({ length: PHASES - 1 }, (_, i) => marker(`go-${i + 1}`));
    const steps: unknown[] = [];
    for (let phase = 0; phase < PHASES; phase++) {
      if (phase > 0) steps.push({ waitFile: gates[phase - 1] });
      for (let i = 1; i <= PER_PHASE; i++) steps.push({ out: `phase ${phase} line ${i}` });
    }
    const bridge = t.bridge(
      runArgs({ edge: proxy.url, runId: run.id, token: runnerToken, dir, agent: t.agent(steps) }),
    );

    for (let phase = 0; phase < PHASES - 1; phase++) {
      const stored = (phase + 1) * PER_PHASE;
      await waitFor(
        `${stored} events stored before cut ${phase + 1}`,
        async () => (await t.api.runnerEvents(run.id)).length === stored,
      );
      const before = proxy.connections();
      const cut = proxy.cutAll();
      expect(cut).toBeGreaterThan(0);
      // The agent writes its next phase while the bridge is disconnected.
      touch(gates[phase] as string);
      await waitFor(`the bridge to reconnect after cut ${phase + 1}`, () => proxy && proxy.connections() > before);
    }

    expect(await bridge.waitExit()).toBe(0);
    const expected = [];
    for (let phase = 0; phase < PHASES; phase++) {
      for (let i = 1; i <= PER_PHASE; i++) {
        expected.push({
          sourceSeq: phase * PER_PHASE + i,
          type: "TEXT_MESSAGE_CONTENT",
          data: { delta: `phase ${phase} line ${i}` },
        });
      }
    }
    expect(await t.api.runnerEvents(run.id)).toEqual(expected);
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("succeeded");
    expect(proxy.connections()).toBeGreaterThanOrEqual(PHASES); // the first connection plus one per cut, at least
    expect(fs.existsSync(dir)).toBe(false);
  });
});
