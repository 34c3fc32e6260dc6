import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { marker, touch, useEdge } from "./harness/context.ts";
import { textLine } from "./harness/ndjson-events.ts";
import { startProxy, type TestProxy } from "../support/proxy.ts";
import { waitFor } from "../support/wait.ts";

const t = useEdge();
let proxy: TestProxy | null = null;
afterEach(async () => {
  await proxy?.close();
  proxy = null;
});

const PAUSED_RUN_LINES = ["before 1", "before 2", "before 3", "after 1", "after 2"];
// five text lines in a row: one assistant message, named after its first line
const PAUSED_RUN_TRANSCRIPT = PAUSED_RUN_LINES.map((line, i) => textLine(i + 1, line, 1));

/** A run whose agent printed three lines and waits for `go` before its last two. */
async function startPausedRun(edgeUrl?: string) {
  const paused = marker("paused");
  const go = marker("go");
  const out = PAUSED_RUN_LINES.map((line) => ({ out: line }));
  const started = await t.startRun({
    ...(edgeUrl ? { edgeUrl } : {}),
    agent: t.agent([...out.slice(0, 3), { touch: paused }, { waitFile: go }, ...out.slice(3)]),
  });
  await waitFor(
    "three events stored and the agent paused",
    async () => fs.existsSync(paused) && (await t.api.runnerEvents(started.run.id)).length === 3,
  );
  return { ...started, go };
}

describe("the connection is cut under the bridge", () => {
  it("reconnects through repeated cuts and the stored log is still exact", async () => {
    proxy = await startProxy(t.edge.port);
    const PHASES = 4;
    const PER_PHASE = 15;
    const gates = Array.from({ length: PHASES - 1 }, (_, i) => marker(`go-${i + 1}`));
    const steps: unknown[] = [];
    for (let phase = 0; phase < PHASES; phase++) {
      if (phase > 0) steps.push({ waitFile: gates[phase - 1] });
      for (let i = 1; i <= PER_PHASE; i++) steps.push({ out: `phase ${phase} line ${i}` });
    }
    const { run, dir, bridge } = await t.startRun({ edgeUrl: proxy.url, agent: t.agent(steps) });

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
        expected.push(textLine(phase * PER_PHASE + i, `phase ${phase} line ${i}`, 1));
      }
    }
    expect(await t.api.runnerEvents(run.id)).toEqual(expected);
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("succeeded");
    expect(proxy.connections()).toBeGreaterThanOrEqual(PHASES); // the first connection plus one per cut, at least
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe("the edge restarts under the bridge", () => {
  it("a failed connection attempt is followed by the next one within the backoff, not the 15 s claim timeout", async () => {
    const { run, bridge, go } = await startPausedRun();
    expect((await t.api.getRun(run.id)).epoch).toBe(1);

    // kill -9 of wrangler and workerd; the bridge's attempts fail while the port is closed.
    await t.edge.crash();
    await t.edge.restart();
    // Backoff here is at most 500 ms; the claim timeout a stuck attempt would wait out is 15 s.
    await waitFor(
      "the bridge to be claimed again (epoch 2) within 6 s of the restarted edge answering",
      async () => (await t.api.getRun(run.id)).epoch === 2,
      6000,
    );

    touch(go);
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual(PAUSED_RUN_TRANSCRIPT);
    expect((await t.api.getRun(run.id)).status).toBe("succeeded");
  });
});

describe("a cut at the moment of a claim", () => {
  it("a bridge whose claimed frame was lost is claimed again by its runnerId, not fenced, and the run ends exact", async () => {
    proxy = await startProxy(t.edge.port);
    const { run, bridge, go } = await startPausedRun(proxy.url);

    // The first cut makes the bridge reconnect holding epoch 1; the edge commits its claim of
    // epoch 2 and the proxy cuts that connection exactly as the `claimed` frame passes.
    const lostClaim = proxy.cutAtServerFrame('{"type":"claimed"');
    expect(proxy.cutAll()).toBeGreaterThan(0);
    await waitFor("the proxy to cut the connection as the edge's claimed frame passed", () => lostClaim.happened());

    touch(go);
    const code = await bridge.waitExit();
    expect(code, `the bridge's exit status; its stderr: ${bridge.stderr().slice(-600)}`).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual(PAUSED_RUN_TRANSCRIPT);
    const final = await t.api.getRun(run.id);
    expect(final.status).toBe("succeeded");
    const claims = (await t.api.events(run.id)).filter((e) => e.type === "run.claimed");
    expect(claims.length).toBeGreaterThanOrEqual(3);
    const runnerIds = new Set(claims.map((e) => (e.data as { runnerId: string }).runnerId));
    expect(runnerIds.size, "one bridge process keeps one runnerId across reconnects").toBe(1);
  });
});
