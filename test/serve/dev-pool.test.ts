import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Api } from "../support/api.ts";
import { waitFor } from "../support/wait.ts";
import { cli } from "../cli/harness/cli.ts";
import { startServe } from "./serve-process.ts";

// The embedded default pool: `npm run serve -- --dev` (like `npm start`) runs a local pool host, so
// a run created with `--agent demo` runs and finishes with no other command.

const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));
type Hosts = { hosts: { profiles: string[]; slots: number; queue: string }[] };

describe("npm run serve -- --dev: the embedded pool", () => {
  it("runs a demo-profile run by itself, and reuses its pool key across restarts", async () => {
    const dataDir = tempDir("serve-pool-");
    const env = { AGENT_RUN_DEMO_PACE_MS: "0" }; // reaches the demo agent through the pool's profile
    let dev = await startServe({ dataDir, args: ["--dev"], env });
    try {
      const api = new Api(dev.url, "dev-key-alpha");
      await waitFor(
        "the embedded pool host to connect",
        async () => {
          const { hosts } = await api.ok<Hosts>("GET", "/v1/pools");
          return hosts.length === 1;
        },
        60_000,
      );
      const { hosts } = await api.ok<Hosts>("GET", "/v1/pools");
      expect(hosts[0]).toMatchObject({ queue: "default", slots: 2 });
      expect(hosts[0]?.profiles).toContain("demo");
      expect(dev.output()).toContain("embedded pool: 2 slots, profiles from agents.json");

      const created = await cli(
        dev.url,
        ["create", "--agent", "demo", "--prompt", "why do the payments tests fail?", "--json"],
        {
          key: "dev-key-alpha",
        },
      );
      expect(created.code).toBe(0);
      const runId = (JSON.parse(created.stdout) as { run: { id: string } }).run.id;
      const done = await api.waitForStatus(runId, "succeeded", 60_000);
      expect(done).toMatchObject({ agent: "demo", queue: "default", generation: 1 });
      const events = await api.events(runId);
      expect(events.filter((e) => e.source === "runner").at(-1)).toMatchObject({
        type: "RUN_FINISHED",
        data: { threadId: `thread-${runId}`, runId, result: { fixed: false } },
      });
      const keys = await api.ok<{ keys: { id: string }[] }>("GET", "/v1/pool-keys");
      expect(keys.keys).toHaveLength(1);

      await dev.stop();
      dev = await startServe({ dataDir, args: ["--dev"], env });
      await waitFor(
        "the embedded pool host to connect again",
        async () => {
          const again = await new Api(dev.url, "dev-key-alpha").ok<Hosts>("GET", "/v1/pools");
          return again.hosts.length === 1;
        },
        60_000,
      );
      const after = await new Api(dev.url, "dev-key-alpha").ok<{ keys: { id: string }[] }>("GET", "/v1/pool-keys");
      expect(after.keys.map((k) => k.id)).toEqual(keys.keys.map((k) => k.id));
    } finally {
      await dev.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("--no-pool leaves it out: a profile run waits, saying why", async () => {
    const dataDir = tempDir("serve-nopool-");
    const dev = await startServe({ dataDir, args: ["--dev", "--no-pool"] });
    try {
      const api = new Api(dev.url, "dev-key-alpha");
      const created = await api.createRun({ agent: "demo", input: { prompt: "hi" } });
      const waiting = await waitFor("the run to say why it waits", async () => {
        const run = (await api.getRun(created.run.id)) as unknown as {
          status: string;
          dispatch: { reason: string | null } | null;
        };
        return run.dispatch?.reason ? run : null;
      });
      expect(waiting.status).toBe("queued");
      expect((await api.ok<Hosts>("GET", "/v1/pools")).hosts).toEqual([]);
      expect(dev.output()).not.toContain("embedded pool");
      expect(fs.existsSync(path.join(dataDir, "dev-pool-key.json"))).toBe(false);
    } finally {
      await dev.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
