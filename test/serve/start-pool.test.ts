import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { groupAlive, signalGroup } from "../../runner-bridge/src/proctree.ts";
import { Api } from "../support/api.ts";
import { waitFor } from "../support/wait.ts";
import { freePort, REPO } from "../support/wrangler-dev.ts";

// `npm start` (serve/start.ts): wrangler dev plus the embedded pool host, so a demo-profile run
// finishes with no other command; Ctrl-C (SIGINT to the whole group) leaves nothing running.

describe("npm start: the embedded pool", () => {
  it("runs a demo-profile run by itself, and a Ctrl-C stops the edge and the pool together", async () => {
    const port = await freePort();
    const persist = fs.mkdtempSync(path.join(os.tmpdir(), "start-pool-"));
    const child = spawn(
      process.execPath,
      [
        path.join(REPO, "serve/start.ts"),
        ...["--port", String(port), "--ip", "127.0.0.1", "--persist-to", persist],
        ...["--log-level", "warn", "--show-interactive-dev-session=false"],
      ],
      {
        cwd: REPO,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", AGENT_RUN_DEMO_PACE_MS: "0" },
      },
    );
    let output = "";
    child.stdout?.on("data", (d) => (output += d));
    child.stderr?.on("data", (d) => (output += d));
    const pgid = child.pid as number;
    try {
      const api = new Api(`http://127.0.0.1:${port}`, "dev-key-alpha");
      await waitFor(
        `the embedded pool host to connect; output: ${output.slice(-1500)}`,
        async () => (await api.ok<{ hosts: unknown[] }>("GET", "/v1/pools")).hosts.length === 1,
        120_000,
        250,
      );
      const created = await api.createRun({ agent: "demo", input: { prompt: "why do the payments tests fail?" } });
      await api.waitForStatus(created.run.id, "succeeded", 60_000);
      expect(output).toContain("[start] embedded pool: 2 slots");
      expect(fs.existsSync(path.join(persist, "dev-pool-key.json"))).toBe(true);

      signalGroup(pgid, "SIGINT");
      await waitFor(`npm start's process group ${pgid} to be gone after Ctrl-C`, () => !groupAlive(pgid), 30_000);
    } finally {
      if (groupAlive(pgid)) signalGroup(pgid, "SIGKILL");
      fs.rmSync(persist, { recursive: true, force: true });
    }
  });
});
