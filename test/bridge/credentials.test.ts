import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startRecordingProxy, type RecordingProxy } from "../support/recording-proxy.ts";
import { waitFor } from "../support/wait.ts";
import { tempDir } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";
import { textLine } from "./harness/ndjson-events.ts";

const t = useEdge();
let proxy: RecordingProxy | null = null;
afterEach(async () => {
  await proxy?.close();
  proxy = null;
});

/** `runner-bridge run` flags without --token: the token comes from elsewhere. */
function runWithout(edge: string, runId: string, dir: string, extra: string[], agent: string[]): string[] {
  return ["run", "--edge", edge, "--run", runId, "--dir", dir, "--reconnect-min-ms", "50", ...extra, "--", ...agent];
}

describe("the runner token", () => {
  it("travels in the Authorization header of every request and socket, never in a URL", async () => {
    proxy = await startRecordingProxy(t.edge.port);
    const created = await t.api.createRun();
    const token = created.runnerToken;
    const paused = marker("paused");
    const go = marker("go");
    const bridge = t.bridge(
      runWithout(
        proxy.url,
        created.run.id,
        t.runDir(),
        [],
        t.agent([{ touch: paused }, { waitFile: go }, { out: "done" }]),
      ),
      { env: { RUNNER_BRIDGE_TOKEN: token } },
    );
    await waitFor("the agent to start", () => fs.existsSync(paused));
    expect(fs.readFileSync(`/proc/${bridge.pid}/cmdline`, "utf8")).not.toContain(token);
    touch(go);
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(created.run.id)).toEqual([textLine(1, "done")]);

    const seen = proxy.seen();
    expect(seen.filter((r) => r.upgrade).length).toBeGreaterThanOrEqual(1); // the runner socket
    expect(seen.filter((r) => !r.upgrade).length).toBeGreaterThanOrEqual(1); // the preflight
    for (const request of seen) {
      expect(request.url, `${request.method} ${request.url}`).not.toContain(token);
      expect(request.url).not.toMatch(/[?&]token=/);
      expect(request.authorization, `${request.method} ${request.url}`).toBe(`Bearer ${token}`);
    }
  });

  it("can come from --token-file, and the run goes through", async () => {
    const created = await t.api.createRun();
    const file = path.join(tempDir("runner-token-"), "token");
    fs.writeFileSync(file, `${created.runnerToken}\n`, { mode: 0o600 });
    const bridge = t.bridge(
      runWithout(t.edge.url, created.run.id, t.runDir(), ["--token-file", file], t.agent([{ out: "from a file" }])),
      { env: { RUNNER_BRIDGE_TOKEN: "" } },
    );
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(created.run.id)).toEqual([textLine(1, "from a file")]);
    expect((await t.api.getRun(created.run.id)).status).toBe("succeeded");
  });
});
