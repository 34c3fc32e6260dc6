import { describe, expect, test } from "vitest";
import { freePort, REPO } from "../support/wrangler-dev.ts";
import { cli, ERROR_LINE, lines } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";

const edge = useEdge();
const run = (args: string[], options?: Parameters<typeof cli>[2]) => cli(edge.url, args, options);

describe("usage", () => {
  test.each([
    [[], "agent-run: no command given"],
    [["launch"], 'agent-run: unknown command "launch"'],
    [["list", "--bogus"], "agent-run: Unknown option '--bogus'"],
    [["get"], "agent-run: get takes ID, got 0 argument(s)"],
    [["get", "a", "b"], "agent-run: get takes ID, got 2 argument(s)"],
    [["list", "--limit", "lots"], "agent-run: --limit needs a whole number of at least 1, got lots"],
    [["list", "--status", "done"], "agent-run: --status must be one of queued, running, waiting"],
    [["events", "x", "--after", "-1"], "agent-run: Option '--after' argument is ambiguous."],
    [["events", "x", "--after=-1"], "agent-run: --after needs a whole number, got -1"],
    [["create", "--input", "say hi"], `agent-run: --input must be JSON or @file, e.g. --input '{"prompt":"say hi"}'`],
    [["create", "--timeout", "lunch=5"], "agent-run: --timeout lunch=5: expected NAME=MS with NAME one of claim,"],
    [["create", "--id", "no spaces"], "agent-run: --id: run id must match"],
    [["token", "x"], "agent-run: token needs --role viewer or --role runner"],
    [["token", "x", "--role", "runner", "--interact"], "agent-run: --interact: only viewer tokens take interact"],
    [["token", "x", "--role", "admin"], "agent-run: --role must be one of runner, viewer\n"],
    [["token", "x", "--role", "viewer", "--ttl", "5"], "agent-run: --ttl must be at least 1000\n"],
    [["list", "--output", "yaml"], "agent-run: --output must be one of table, json, ndjson, got yaml\n"],
    [["completion", "fish"], "agent-run: completion takes bash or zsh, got fish\n"],
    [["list", "--url", "ftp://example.com"], "agent-run: --url ftp://example.com is not an http(s) URL"],
  ])("agent-run %j exits 64 with the reason and the usage", async (args, reason) => {
    const out = await run(args);
    expect(out.code).toBe(64);
    expect(out.stdout).toBe("");
    expect(out.stderr.startsWith(reason)).toBe(true);
    expect(out.stderr).toContain("usage: agent-run ");
  });

  test("--help prints the usage on stdout and exits 0; a command's --help shows that command", async () => {
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    for (const command of ["create", "list", "get", "events", "watch", "send", "interrupt", "cancel"])
      expect(help.stdout).toContain(`\n  ${command} `);
    expect(help.stdout).toContain("exit status: 0 ok (watch: succeeded), 1 failed, 2 cancelled, 3 timed_out");
    const watch = await run(["watch", "--help"]);
    expect(watch).toEqual({
      code: 0,
      stdout:
        "usage: agent-run watch ID [--after N] [--json] [--give-up-ms MS] [--check-ms MS] [--url URL] [--key KEY]\n" +
        "  follow the run live until it ends (exit 0 succeeded, 1 failed, 2 cancelled, 3 timed_out)\n",
      stderr: "",
    });
  });

  test("npx agent-run runs the workspace's bin from the clone", async () => {
    const { spawnSync } = await import("node:child_process");
    const out = spawnSync("npx", ["agent-run", "help", "get"], { cwd: REPO, encoding: "utf8", timeout: 60_000 });
    expect(out.stdout).toBe("usage: agent-run get ID [--json] [--url URL] [--key KEY]\n  the run record\n");
    expect(out.status).toBe(0);
  });
});

describe("credentials", () => {
  test("a missing key says exactly how to set one, and exits 64", async () => {
    const out = await run(["list"], { key: null });
    expect(out).toEqual({
      code: 64,
      stdout: "",
      stderr:
        "agent-run: no API key: pass --key KEY or set AGENT_RUN_KEY, e.g. export AGENT_RUN_KEY=dev-key-alpha (the local server's keys are in .dev.vars)\n",
    });
    expect((await run(["list", "--key", "dev-key-alpha", "--json"], { key: null })).code).toBe(0);
  });

  test("--key also takes a run's viewer token, which reads that run and nothing else", async () => {
    const created = await edge.api.createRun({ runId: "k-1" });
    const get = await run(["get", "k-1", "--json"], { key: created.viewerToken });
    expect(get.code).toBe(0);
    const list = await run(["list"], { key: created.viewerToken });
    expect(list).toEqual({
      code: 4,
      stdout: "",
      stderr:
        "agent-run: forbidden: a viewer token cannot call the API; this key is a viewer token for run k-1 alone: " +
        "it can get k-1, events k-1, watch k-1 (read-only); listing runs and other runs need an API key (AGENT_RUN_KEY)\n",
    });
    const send = await run(["send", "k-1", "hi"], { key: created.viewerToken });
    expect(send.stderr).toBe("agent-run: forbidden: this viewer token cannot send commands\n");
  });
});

describe("HTTP and socket errors are one line on stderr and exit 4", () => {
  test.each([
    [["list"], "agent-run: unauthorized: unknown API key\n", "wrong-key"],
    [["get", "nope"], "agent-run: not_found: ", undefined],
    [["events", "nope"], "agent-run: not_found: ", undefined],
    [["watch", "nope"], "agent-run: not_found: ", undefined],
    [["approve", "nope", "r-1"], "agent-run: not_found: ", undefined],
    [["token", "nope", "--role", "viewer"], "agent-run: not_found: ", undefined],
  ])("agent-run %j", async (args, start, key) => {
    const out = await run(args, key ? { key } : {});
    expect(out.code).toBe(4);
    expect(out.stdout).toBe("");
    expect(out.stderr).toMatch(ERROR_LINE);
    expect(out.stderr.startsWith(start)).toBe(true);
  });

  test("nothing listening: every command says the server cannot be reached", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    for (const args of [["list"], ["get", "x"], ["watch", "x"], ["send", "x", "hi", "--command-id", "c-1"]]) {
      const out = await cli(url, args);
      expect(out.code).toBe(4);
      expect(lines(out.stderr)).toHaveLength(1);
      expect(out.stderr).toMatch(ERROR_LINE);
      expect(out.stderr).toContain(
        `agent-run: unreachable: cannot reach ${url} (ECONNREFUSED); is the server running?`,
      );
    }
    const send = await cli(url, ["send", "x", "hi", "--command-id", "c-1"]);
    expect(send.stderr).toMatch(/retry safely with --command-id c-1\n$/);
  });
});
