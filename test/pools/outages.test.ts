import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { startProxy } from "../support/proxy.ts";
import { waitFor } from "../support/wait.ts";
import { marker, touch, transcript, usePools } from "./harness.ts";

// Runner pools, tests 5 and 8: a network blip shorter than the takeover window changes nothing,
// and the edge killed (-9) mid-dispatch loses no run and dispatches none twice.

const t = usePools();

describe("outages", () => {
  it("a network cut of a host shorter than the takeover window: its runs stay with it, nothing reassigned", async () => {
    const proxy = await startProxy(t.edge.port);
    try {
      const { key } = await t.poolKey();
      const a = t.host({ key, edge: proxy.url, slots: 2 });
      const idA = await a.hostId();
      const started = [marker("started-1"), marker("started-2")];
      const goOn = marker("go-on");
      const runIds = [
        await t.createRun([{ out: "one before" }, { touch: started[0] }, { waitFile: goOn }, { out: "one after" }], {
          timeouts: { heartbeatMs: 5000, takeoverMs: 10_000 },
        }),
        await t.createRun([{ out: "two before" }, { touch: started[1] }, { waitFile: goOn }, { out: "two after" }], {
          timeouts: { heartbeatMs: 5000, takeoverMs: 10_000 },
        }),
      ];
      await waitFor("both agents to be waiting", () => started.every((f) => fs.existsSync(f)), 60_000);
      const b = t.host({ key, slots: 2 }); // another host with free slots, straight to the edge
      await b.hostId();

      const connectionsBefore = proxy.connections();
      expect(proxy.cutAll()).toBeGreaterThanOrEqual(3); // the pool socket and both runner sockets
      await waitFor(
        "the pool and both bridges to dial again through the proxy",
        () => proxy.connections() >= connectionsBefore + 3,
        20_000,
      );
      await waitFor(
        "both runs' runners to be connected again",
        async () => {
          const runs = await Promise.all(runIds.map((id) => t.api.getRun(id)));
          return runs.every((r) => r.runner.connected && r.status === "running");
        },
        20_000,
      );
      touch(goOn);
      for (const id of runIds) await t.api.waitForStatus(id, "succeeded", 60_000);

      expect(a.accepted().sort()).toEqual([...runIds].sort());
      expect(b.accepted()).toEqual([]);
      for (const [i, id] of runIds.entries()) {
        const { texts, control, runnerRows, events } = await transcript(t.api, id);
        const name = i === 0 ? "one" : "two";
        expect(texts).toEqual([`${name} before\n`, `${name} after\n`]);
        expect(runnerRows).toEqual([
          [1, 1, "TEXT_MESSAGE_CHUNK"],
          [1, 2, "TEXT_MESSAGE_CHUNK"],
        ]);
        // No stall, no recovery: the same bridge (one runnerId) claimed it again on reconnecting.
        expect(control.filter((type) => type !== "run.claimed")).toEqual(["run.created", "run.finished"]);
        const claims = events.filter((e) => e.type === "run.claimed");
        expect(claims.length).toBeGreaterThanOrEqual(2);
        expect(new Set(claims.map((e) => (e.data as { runnerId: string }).runnerId)).size).toBe(1);
        expect(await t.api.getRun(id)).toMatchObject({ epoch: claims.length, generation: 1, poolHost: idA });
      }
      // The pool reconnected as the same host (one hostId for the process), naming its running assignments.
      expect([...a.output().matchAll(/connected to queue default as (\S+)/g)].map((m) => m[1])).toEqual([idA, idA]);
    } finally {
      await proxy.close();
    }
  });

  it("the edge killed -9 mid-dispatch and restarted: every run finishes once, none dispatched twice", async () => {
    const { key } = await t.poolKey();
    const a = t.host({ key, slots: 2 });
    const b = t.host({ key, slots: 2 });
    await Promise.all([a.hostId(), b.hostId()]);
    const goOn = marker("go-on");
    const runIds: string[] = [];
    for (let i = 1; i <= 6; i++) {
      runIds.push(await t.createRun([{ out: `run ${i} began` }, { waitFile: goOn }, { out: `run ${i} ended` }]));
    }
    // Four held (all slots), two queued: then the edge dies with dispatch under way.
    await waitFor(
      "four runs held by hosts",
      async () => {
        const runs = await Promise.all(runIds.map((id) => t.api.getRun(id)));
        return runs.filter((r) => r.status === "running").length === 4;
      },
      60_000,
    );
    await t.edge.restart();
    touch(goOn);
    for (const id of runIds) await t.api.waitForStatus(id, "succeeded", 120_000);

    for (const [i, id] of runIds.entries()) {
      const { texts, control, events } = await transcript(t.api, id);
      expect(texts).toEqual([`run ${i + 1} began\n`, `run ${i + 1} ended\n`]);
      // Claimed again after the restart, but by the one bridge it was dispatched to: never recovered.
      const claims = events.filter((e) => e.type === "run.claimed");
      expect(new Set(claims.map((e) => (e.data as { runnerId: string }).runnerId)).size).toBe(1);
      expect(control.filter((type) => type === "run.recovering" || type === "run.generation.started")).toEqual([]);
      expect(await t.api.getRun(id)).toMatchObject({ generation: 1 });
    }
    expect([...a.accepted(), ...b.accepted()].sort()).toEqual([...runIds].sort());
  });
});
