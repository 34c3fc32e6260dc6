import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseArgs } from "../../../runner-bridge/src/args.ts";
import { BRIDGE_BIN, NODE } from "../harness/bridge.ts";

const REQUIRED = ["--edge", "http://edge", "--run", "r1", "--token", "tok"];
const REQUIRED_PARSED = { edge: "http://edge", runId: "r1", token: "tok" };
/** What the documented defaults parse to, beside the required flags. */
const DEFAULTS = {
  graceMs: 5000,
  giveUpMs: 600_000,
  reconnectMinMs: 250,
  reconnectMaxMs: 15_000,
  checkpointIntervalMs: 60_000,
  lingerMs: 10,
  quiet: false,
};

/** No sandbox: the agent as a plain child with the host's network (the default of run and resume). */
const NO_SANDBOX = { mode: "none", network: { kind: "host" } };

/** The message of a refused command line (and a failure when it was not refused). */
function refusal(argv: string[], env: NodeJS.ProcessEnv = {}): string {
  const parsed = parseArgs(argv, env);
  if (parsed.ok) throw new Error(`accepted: ${JSON.stringify(parsed.value)}`);
  return parsed.message;
}

describe("runner-bridge resume", () => {
  it("takes run's flags; the adapter is left to the run's session unless named", () => {
    expect(parseArgs(["resume", ...REQUIRED, "--dir", "/tmp/d", "--", "codex", "app-server"])).toEqual({
      ok: true,
      value: {
        command: "resume",
        ...REQUIRED_PARSED,
        ...DEFAULTS,
        dir: "/tmp/d",
        envNames: [],
        sandbox: NO_SANDBOX,
        argv: ["codex", "app-server"],
      },
    });
    const named = parseArgs(["resume", ...REQUIRED, "--adapter", "ndjson", "--checkpoint", "c", "--", "agent"]);
    expect(named).toMatchObject({ ok: true, value: { adapter: "ndjson", checkpoint: "c" } });
    expect(refusal(["resume", ...REQUIRED])).toBe("resume needs the agent's command after --");
  });
});

describe("runner-bridge run", () => {
  it("takes every documented flag, and the agent's command after --", () => {
    const parsed = parseArgs([
      "run",
      ...REQUIRED,
      "--dir",
      "/tmp/d",
      "--adapter=codex",
      "--env",
      "API_KEY",
      "--env",
      "OTHER",
      "--prompt",
      "hi there",
      "--grace-ms",
      "100",
      "--give-up-ms",
      "2000",
      "--reconnect-min-ms",
      "10",
      "--reconnect-max-ms",
      "90",
      "--checkpoint-interval",
      "700",
      "--linger-ms",
      "20",
      "--checkpoint",
      "state.json",
      "--quiet",
      "--",
      "codex",
      "app-server",
      "--flag-for-the-agent",
    ]);
    expect(parsed).toEqual({
      ok: true,
      value: {
        command: "run",
        ...REQUIRED_PARSED,
        dir: "/tmp/d",
        adapter: "codex",
        envNames: ["API_KEY", "OTHER"],
        prompt: "hi there",
        graceMs: 100,
        giveUpMs: 2000,
        reconnectMinMs: 10,
        reconnectMaxMs: 90,
        checkpointIntervalMs: 700,
        lingerMs: 20,
        checkpoint: "state.json",
        quiet: true,
        sandbox: NO_SANDBOX,
        argv: ["codex", "app-server", "--flag-for-the-agent"],
      },
    });
  });

  it("defaults: the ndjson adapter, no --env, documented timings, and the token from RUNNER_BRIDGE_TOKEN", () => {
    const parsed = parseArgs(["run", "--edge", "http://edge", "--run", "r1", "--", "agent"], {
      RUNNER_BRIDGE_TOKEN: "from-env",
    });
    expect(parsed).toEqual({
      ok: true,
      value: {
        command: "run",
        ...REQUIRED_PARSED,
        token: "from-env",
        adapter: "ndjson",
        envNames: [],
        ...DEFAULTS,
        sandbox: NO_SANDBOX,
        argv: ["agent"],
      },
    });
  });

  it("--sandbox os: network none unless given, allow: lists domains, a workspace and hidden roots", () => {
    const sandbox = (...flags: string[]) => {
      const parsed = parseArgs(["run", ...REQUIRED, ...flags, "--", "agent"]);
      if (!parsed.ok) throw new Error(parsed.message);
      return parsed.value.command === "run" ? parsed.value.sandbox : null;
    };
    expect(sandbox("--sandbox", "os")).toEqual({ mode: "os", network: { kind: "none" } });
    expect(sandbox("--sandbox", "os", "--network", "host")).toEqual({ mode: "os", network: { kind: "host" } });
    expect(
      sandbox("--sandbox=os", "--network", "allow:API.openai.com,*.example.com,api.openai.com", "--workspace", "w"),
    ).toEqual({
      mode: "os",
      network: { kind: "allow", domains: ["api.openai.com", "*.example.com"] },
      workspace: "w",
    });
    expect(sandbox("--sandbox", "os", "--hide", "/pool", "--hide", "/other")).toMatchObject({
      hide: ["/pool", "/other"],
    });
    expect(sandbox("--sandbox", "os", "--home", "/srv/home")).toEqual({
      mode: "os",
      network: { kind: "none" },
      home: "/srv/home",
    });
    expect(sandbox("--workspace", "w")).toEqual({ ...NO_SANDBOX, workspace: "w" });
    expect(sandbox("--network", "host")).toEqual(NO_SANDBOX);
  });

  it("refuses a sandbox it cannot enforce: an unknown mode or network, an empty or bad allow-list, --network none without one", () => {
    const run = (...flags: string[]) => refusal(["run", ...REQUIRED, ...flags, "--", "agent"]);
    expect(run("--sandbox", "docker")).toBe("--sandbox docker: expected none or os");
    expect(run("--sandbox", "os", "--network", "some")).toBe(
      "--network some: expected none, host or allow:<domain,...>",
    );
    expect(run("--sandbox", "os", "--network", "allow:")).toBe(
      "--network allow: needs at least one domain (allow:api.openai.com,...)",
    );
    expect(run("--sandbox", "os", "--network", "allow:bad_host!")).toBe(
      "--network allow: bad_host! is not a domain name",
    );
    expect(run("--network", "none")).toBe(
      "--network none needs --sandbox os (without a sandbox the agent has the host's network)",
    );
    expect(run("--hide", "/x")).toBe("--hide needs --sandbox os");
    expect(run("--home", "/x")).toBe("--home needs --sandbox os (without a sandbox the agent has the bridge's HOME)");
  });

  it("refuses a missing agent command, a stray argument, an attach-only flag and a bad variable name", () => {
    expect(refusal(["run", ...REQUIRED])).toBe("run needs the agent's command after --");
    expect(refusal(["run", ...REQUIRED, "agent", "--", "x"])).toBe(
      "unexpected argument agent (put the agent's command after --)",
    );
    expect(refusal(["run", ...REQUIRED, "--wait-ms", "5", "--", "x"])).toContain("--wait-ms");
    expect(refusal(["run", ...REQUIRED, "--env", "NOT-A-NAME", "--", "x"])).toBe(
      "--env NOT-A-NAME is not a variable name",
    );
  });
});

describe("runner-bridge attach", () => {
  it("takes --wait-ms (default 10000) and no agent command", () => {
    const parsed = parseArgs(["attach", ...REQUIRED, "--wait-ms", "1500"]);
    expect(parsed.ok && parsed.value).toMatchObject({ command: "attach", runId: "r1", waitMs: 1500 });
    const defaults = parseArgs(["attach", ...REQUIRED]);
    expect(defaults.ok && defaults.value).toEqual({
      command: "attach",
      ...REQUIRED_PARSED,
      waitMs: 10_000,
      ...DEFAULTS,
    });
    expect(refusal(["attach", ...REQUIRED, "--", "agent"])).toBe("attach takes no agent command");
    expect(refusal(["attach", ...REQUIRED, "--env", "X"])).toContain("--env");
  });
});

describe("every command", () => {
  it("asks for --edge, --run and a token", () => {
    expect(refusal(["attach", "--run", "r1", "--token", "t"])).toBe("--edge is required");
    expect(refusal(["attach", "--edge", "http://e", "--token", "t"])).toBe("--run is required");
    expect(refusal(["attach", "--edge", "http://e", "--run", "r1"])).toBe(
      "no runner token: set RUNNER_BRIDGE_TOKEN or pass --token-file PATH",
    );
  });

  it("takes the runner token from a file or the environment, so it stays out of the process list", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "token-file-"));
    const file = path.join(dir, "token");
    fs.writeFileSync(file, "rt1.from-file\n", { mode: 0o600 });
    const base = ["attach", "--edge", "http://e", "--run", "r1"];
    const token = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
      const parsed = parseArgs(argv, env);
      return parsed.ok && parsed.value.command === "attach" ? parsed.value.token : parsed;
    };
    expect(token([...base, "--token-file", file])).toBe("rt1.from-file");
    expect(token(base, { RUNNER_BRIDGE_TOKEN: "rt1.from-env" })).toBe("rt1.from-env");
    expect(token([...base, "--token-file", file], { RUNNER_BRIDGE_TOKEN: "rt1.from-env" })).toBe("rt1.from-file");
    expect(refusal([...base, "--token-file", file, "--token", "t"])).toBe("pass --token or --token-file, not both");
    expect(refusal([...base, "--token-file", path.join(dir, "missing")])).toBe(
      `--token-file ${path.join(dir, "missing")}: ENOENT`,
    );
    fs.writeFileSync(file, "\n");
    expect(refusal([...base, "--token-file", file])).toBe(`--token-file ${file} is empty`);
  });

  it("refuses timings that are not non-negative integers, and flags without a value", () => {
    expect(refusal(["attach", ...REQUIRED, "--grace-ms", "soon"])).toBe("--grace-ms needs a non-negative integer");
    expect(refusal(["attach", ...REQUIRED, "--give-up-ms=-1"])).toBe("--give-up-ms needs a non-negative integer");
    expect(refusal(["attach", ...REQUIRED, "--wait-ms", "1.5"])).toBe("--wait-ms needs a non-negative integer");
    expect(refusal(["attach", ...REQUIRED, "--dir"])).toContain("--dir");
  });

  it("help in any spelling, and an unknown command refused", () => {
    for (const argv of [[], ["help"], ["--help"], ["-h"]])
      expect(parseArgs(argv)).toEqual({ ok: true, value: { command: "help" } });
    expect(refusal(["launch"])).toBe("unknown command launch");
  });

  it("a bad flag exits 64 with the reason and the usage; help exits 0 with the usage", () => {
    const bad = spawnSync(NODE, [BRIDGE_BIN, "run", ...REQUIRED, "--colour", "blue", "--", "x"], { encoding: "utf8" });
    expect(bad.status).toBe(64);
    expect(bad.stderr).toMatch(/^runner-bridge: .*--colour/);
    expect(bad.stderr).toContain("usage:\n  runner-bridge run");
    const help = spawnSync(NODE, [BRIDGE_BIN, "--help"], { encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage:\n  runner-bridge run");
  });
});
