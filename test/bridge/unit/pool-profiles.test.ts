import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parsePoolArgs } from "../../../runner-bridge/src/pool/args.ts";
import { bridgeArgv } from "../../../runner-bridge/src/pool/assignment.ts";
import { loadProfiles } from "../../../runner-bridge/src/pool/profiles.ts";
import { BRIDGE_BIN, NODE } from "../harness/bridge.ts";

const REPO = path.resolve(import.meta.dirname, "../../..");

function agentsFile(content: unknown): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agents-")), "agents.json");
  fs.writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

const NODE_PROFILE = { adapter: "ndjson", command: ["node", "./agent.mjs"] };

describe("agent profiles", () => {
  it("finds the program on PATH, makes ./ paths relative to the file, and leaves out what is not installed", () => {
    const file = agentsFile({ here: NODE_PROFILE, gone: { adapter: "codex", command: ["no-such-cli-xyz"] } });
    const { served, skipped } = loadProfiles(file);
    expect([...served.keys()]).toEqual(["here"]);
    const here = served.get("here");
    expect(path.isAbsolute(here?.command[0] as string)).toBe(true);
    expect(here?.command[1]).toBe(path.join(path.dirname(file), "agent.mjs"));
    expect(here?.sandbox).toEqual({ mode: "os", network: { kind: "none" } }); // the pools' default
    expect(skipped).toEqual(["profile gone left out: no-such-cli-xyz is not on PATH"]);
  });

  it("a profile's home is its agents' HOME, relative to the file; the bridge gets it as --home", () => {
    const file = agentsFile({ codex: { ...NODE_PROFILE, home: "homes/codex" }, abs: { ...NODE_PROFILE, home: "/h" } });
    const { served } = loadProfiles(file);
    expect(served.get("codex")?.sandbox).toEqual({
      mode: "os",
      network: { kind: "none" },
      home: path.join(path.dirname(file), "homes/codex"),
    });
    expect(served.get("abs")?.sandbox.home).toBe("/h");
  });

  it("a bad file is one line naming the field", () => {
    const cases: [unknown, RegExp][] = [
      ["{not json", /is not JSON/],
      [{ x: { adapter: "bogus", command: ["node"] } }, /invalid at x\.adapter/],
      [{ "Bad Name": NODE_PROFILE }, /invalid at Bad Name/],
      [{ x: { ...NODE_PROFILE, command: [] } }, /invalid at x\.command/],
      [{ x: { ...NODE_PROFILE, extra: 1 } }, /invalid at/],
      [{ x: { ...NODE_PROFILE, checkpoint: "../outside" } }, /x\.checkpoint: a path inside the run's workspace/],
      [{ x: { ...NODE_PROFILE, sandbox: "none", network: "none" } }, /invalid at x: --network none needs --sandbox os/],
      [{ x: { ...NODE_PROFILE, sandbox: "vm" } }, /invalid at x: --sandbox vm/],
      [{ x: { ...NODE_PROFILE, home: 5 } }, /invalid at x: --home needs a directory/],
      [{ x: { ...NODE_PROFILE, sandbox: "none", home: "/h" } }, /invalid at x: --home needs --sandbox os/],
      [{}, /has no profile this host can run/],
    ];
    for (const [content, message] of cases) {
      expect(() => loadProfiles(agentsFile(content)), JSON.stringify(content)).toThrow(message);
    }
  });

  it("the committed agents.json serves the demo agent here", () => {
    const { served } = loadProfiles(path.join(REPO, "agents.json"));
    expect(served.get("demo")?.command.at(-1)).toBe(path.join(REPO, "demo/agent.mjs"));
  });
});

describe("the bridge a pool starts", () => {
  const frame = {
    type: "assign" as const,
    assignmentId: "a1",
    runId: "r1",
    profile: "p",
    start: "run" as const,
    generation: 1,
    runnerToken: "rt1.secret-token",
    prompt: "hello",
    leaseMs: 30_000,
  };
  const where = {
    edge: "http://edge",
    dir: "/pool/r1/g1-a1/run",
    workspace: "/pool/r1/g1-a1/workspace",
    root: "/pool",
  };
  const served = {
    name: "p",
    profile: {
      adapter: "ndjson" as const,
      command: ["/bin/agent"],
      env: ["HOME", "NOT_SET_ANYWHERE_XYZ"],
      checkpoint: "state.json",
    },
    command: ["/bin/agent", "--flag"],
    sandbox: { mode: "os" as const, network: { kind: "none" as const } },
  };

  it("run: the prompt, the profile's env names that are set, its checkpoint and sandbox, never the token", () => {
    const argv = bridgeArgv(frame, served, where);
    expect(argv).toEqual([
      ...["run", "--edge", "http://edge", "--run", "r1", "--dir", "/pool/r1/g1-a1/run", "--adapter", "ndjson"],
      ...["--env", "HOME", "--prompt", "hello", "--checkpoint", "state.json"],
      ...["--sandbox", "os", "--network", "none", "--workspace", "/pool/r1/g1-a1/workspace", "--hide", "/pool"],
      ...["--", "/bin/agent", "--flag"],
    ]);
    expect(argv.join(" ")).not.toContain("secret-token");
  });

  it("a profile's home goes to the bridge as --home", () => {
    const argv = bridgeArgv(frame, { ...served, sandbox: { ...served.sandbox, home: "/srv/homes/p" } }, where);
    expect(argv.slice(argv.indexOf("--sandbox"), argv.indexOf("--"))).toEqual([
      ...["--sandbox", "os", "--network", "none", "--workspace", "/pool/r1/g1-a1/workspace"],
      ...["--home", "/srv/homes/p", "--hide", "/pool"],
    ]);
  });

  it("resume: no prompt (the resumed session has it); a none sandbox hides nothing", () => {
    const argv = bridgeArgv(
      { ...frame, start: "resume", generation: 2 },
      { ...served, sandbox: { mode: "none", network: { kind: "host" } } },
      where,
    );
    expect(argv.slice(0, 1)).toEqual(["resume"]);
    expect(argv).not.toContain("--prompt");
    expect(argv).not.toContain("--hide");
    expect(argv).toContain("--workspace");
  });
});

describe("runner-bridge pool arguments", () => {
  it("the key from RUNNER_POOL_KEY or --key-file; --key works with a warning; none is an error", () => {
    expect(parsePoolArgs(["--edge", "http://e"], { RUNNER_POOL_KEY: "pk1.a" })).toMatchObject({
      key: "pk1.a",
      keyWarning: null,
      slots: 1,
      queue: "default",
    });
    const keyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pool-key-")), "key");
    fs.writeFileSync(keyFile, "pk1.from-file\n");
    expect(parsePoolArgs(["--edge", "http://e", "--key-file", keyFile], {}).key).toBe("pk1.from-file");
    expect(parsePoolArgs(["--edge", "http://e", "--key", "pk1.x"], {}).keyWarning).toMatch(/process list/);
    expect(() => parsePoolArgs(["--edge", "http://e"], {})).toThrow(/RUNNER_POOL_KEY/);
    expect(() => parsePoolArgs(["--edge", "http://e", "--slots", "0"], { RUNNER_POOL_KEY: "k" })).toThrow(/--slots/);
    expect(() => parsePoolArgs(["--edge", "http://e", "--queue", "Bad Q"], { RUNNER_POOL_KEY: "k" })).toThrow(
      /--queue/,
    );
  });

  it("a bad agents file stops the pool with exit 1 and one line", () => {
    const out = spawnSync(
      NODE,
      [
        BRIDGE_BIN,
        "pool",
        "--edge",
        "http://127.0.0.1:1",
        "--agents",
        agentsFile({ x: { adapter: "nope", command: ["a"] } }),
      ],
      {
        env: { ...process.env, RUNNER_POOL_KEY: "pk1.k" },
        encoding: "utf8",
        timeout: 20_000,
      },
    );
    expect(out.status).toBe(1);
    expect(out.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^runner-pool: the agents file .* is invalid at x\.adapter: /),
    ]);
  });
});
