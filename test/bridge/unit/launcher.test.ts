import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REPO } from "../../support/wrangler-dev.ts";
import { BRIDGE_BIN, NODE } from "../harness/bridge.ts";

const AGENT_RUN_BIN = `${REPO}/agent-run/bin/agent-run.mjs`;
const version = (pkg: string) =>
  (JSON.parse(readFileSync(`${REPO}/${pkg}/package.json`, "utf8")) as { version: string }).version;

/**
 * A Node older than 22 to launch the CLIs with: one on PATH (Debian's own, outside npm), or else
 * Node 22 told at startup that it is 20.11.1, which is all the launchers look at.
 */
function oldNode(): { command: string; prefix: string[] } {
  const paths = (process.env.PATH ?? "").split(":").filter((dir) => !dir.includes("node_modules"));
  for (const dir of paths) {
    const candidate = `${dir}/node`;
    try {
      const major = Number(
        execFileSync(candidate, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }),
      );
      if (major < 22) return { command: candidate, prefix: [] };
    } catch {
      // not there, or not a node: look further
    }
  }
  const pretend = 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.11.1"})';
  return { command: NODE, prefix: ["--import", pretend] };
}

describe("the CLI launchers", () => {
  it("on a Node older than 22 both say they need Node 22 and exit 1, instead of failing on .ts", () => {
    const old = oldNode();
    for (const [name, bin] of [
      ["runner-bridge", BRIDGE_BIN],
      ["agent-run", AGENT_RUN_BIN],
    ] as const) {
      const out = spawnSync(old.command, [...old.prefix, bin, "--help"], { encoding: "utf8" });
      expect(out.status).toBe(1);
      expect(out.stdout).toBe("");
      expect(out.stderr).toMatch(new RegExp(`^${name}: needs Node 22 \\(22\\.18 or later\\); this is Node 2[01]\\.`));
      expect(out.stderr).not.toContain("ERR_UNKNOWN_FILE_EXTENSION");
    }
  });

  it("--version prints each CLI's package version and exits 0", () => {
    const bridge = spawnSync(NODE, [BRIDGE_BIN, "--version"], { encoding: "utf8" });
    expect(bridge).toMatchObject({ status: 0, stdout: `runner-bridge ${version("runner-bridge")}\n`, stderr: "" });
    const cli = spawnSync(NODE, [AGENT_RUN_BIN, "--version"], { encoding: "utf8", env: { PATH: process.env.PATH } });
    expect(cli).toMatchObject({ status: 0, stdout: `agent-run ${version("agent-run")}\n`, stderr: "" });
  });

  it("runner-bridge usage errors exit 64 like agent-run's: unknown command, missing flag, bad run id", () => {
    for (const argv of [
      ["launch"],
      ["attach", "--edge", "http://edge", "--run", "r1"],
      ["attach", "--edge", "http://edge", "--run", "no spaces", "--token", "t"],
    ]) {
      const out = spawnSync(NODE, [BRIDGE_BIN, ...argv], { encoding: "utf8", env: { PATH: process.env.PATH } });
      expect(out.status, argv.join(" ")).toBe(64);
      expect(out.stderr).toMatch(/^runner-bridge: /);
    }
  });
});
