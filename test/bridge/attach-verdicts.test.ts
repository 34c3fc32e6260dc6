import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { signToken } from "../../src/auth/tokens.ts";
import { attachArgs } from "./harness/bridge.ts";
import { devTokenSecret } from "../support/api.ts";
import { useEdge } from "./harness/context.ts";
import { waitFor } from "../support/wait.ts";

const t = useEdge();
/** The --wait-ms a verdict must not wait out... */
const LONG_WAIT = 30_000;
/** ...shown by waiting for the exit only a third as long. */
const AT_ONCE = LONG_WAIT / 3;

describe("attach preflight verdicts", () => {
  it("an unknown run with no journal exits 3 at once, without waiting out --wait-ms", async () => {
    const runId = `ghost-${Date.now()}`;
    const token = await signToken(devTokenSecret(), {
      tenant: "alpha",
      runId,
      role: "runner",
      interact: false,
      exp: Date.now() + 3_600_000,
    });
    const bridge = t.bridge(
      attachArgs({ edge: t.edge.url, runId, token, dir: t.runDir(), extra: ["--wait-ms", String(LONG_WAIT)] }),
    );
    expect(await bridge.waitExit(AT_ONCE)).toBe(3);
    expect(bridge.stderr()).toContain("unknown-run");
  });

  it("a terminal run exits 4 at once", async () => {
    const { run, runnerToken } = await t.api.createRun();
    await t.api.cancel(run.id);
    await waitFor("the queued run to be cancelled", async () => (await t.api.getRun(run.id)).status === "cancelled");
    const bridge = t.bridge(
      attachArgs({
        edge: t.edge.url,
        runId: run.id,
        token: runnerToken,
        dir: t.runDir(),
        extra: ["--wait-ms", String(LONG_WAIT)],
      }),
    );
    expect(await bridge.waitExit(AT_ONCE)).toBe(4);
    expect(bridge.stderr()).toContain("terminal-run");
  });

  it("a live run whose journal never appears waits --wait-ms, then exits 5 naming the bound", async () => {
    const { run, runnerToken } = await t.api.createRun();
    const dir = t.runDir();
    const started = Date.now();
    const bridge = t.bridge(
      attachArgs({ edge: t.edge.url, runId: run.id, token: runnerToken, dir, extra: ["--wait-ms", "1500"] }),
    );
    expect(await bridge.waitExit(AT_ONCE)).toBe(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500); // it did wait out --wait-ms
    expect(bridge.stderr()).toContain("1500 ms");
    expect(fs.existsSync(path.join(dir, "journal.ndjson"))).toBe(false);
    expect((await t.api.getRun(run.id)).status).toBe("queued"); // the failed attach claimed nothing
  });
});
