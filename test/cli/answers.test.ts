import { describe, expect, test } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { cli, lines, ndjson, startCli } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const edge = useEdge();
const ZSH_COMPLETE = path.join(import.meta.dirname, "harness/zsh-complete.zsh");
const run = (args: string[], options?: Parameters<typeof cli>[2]) => cli(edge.url, args, options);

// Every answer shape the API documents for a command (see the responses in src/routes/*.ts)
// gets a line, and none is a crash (exit 70).
describe("cancel, in every answer it can get", () => {
  test("no runner: cancelled at once; again: already cancelled (command null); again with the first id: the same", async () => {
    await edge.api.createRun({ runId: "x-1" });
    expect(await run(["cancel", "x-1", "--command-id", "stop-1"])).toEqual({
      code: 0,
      stdout: "run x-1 is cancelled · command stop-1\n",
      stderr: "",
    });
    const again = await run(["cancel", "x-1"]);
    expect(again).toEqual({ code: 0, stdout: "run x-1 was already cancelled\n", stderr: "" });
    const json = await run(["cancel", "x-1", "--json"]);
    expect(json.code).toBe(0);
    expect(ndjson(json.stdout)).toEqual([expect.objectContaining({ created: false, command: null })]);
    expect((await run(["cancel", "x-1", "--command-id", "stop-1"])).code).toBe(0);
  });

  test("a runner attached: cancelling, then a repeat while it stops, then cancelled once it confirms", async () => {
    const { runner } = await edge.claimedRun({ runId: "x-2" });
    const first = await run(["cancel", "x-2", "--command-id", "stop-2"]);
    expect(first.stdout).toBe(
      "cancel for x-2 accepted · command stop-2 · delivered · run running; the runner has 30 s to stop\n",
    );
    const repeat = await run(["cancel", "x-2", "--command-id", "stop-2"]);
    expect(repeat.stdout).toBe(
      "cancel for x-2 was already accepted · command stop-2 · delivered · run running; the runner has 30 s to stop\n",
    );
    await runner.complete({ status: "cancelled" });
    const after = await run(["cancel", "x-2"]);
    expect(after).toMatchObject({ code: 0, stderr: "" });
    expect(after.stdout).toMatch(/^run x-2 was already cancelled/);
  });

  test("a run that ended otherwise: the refusal is one line with exit 4, never 70", async () => {
    const { runner } = await edge.claimedRun({ runId: "x-3" });
    await runner.complete({ status: "succeeded", exitCode: 0 });
    const out = await run(["cancel", "x-3"]);
    expect([0, 4]).toContain(out.code);
    expect(out.stderr).not.toContain("internal");
  });
});

describe("list commands' --output", () => {
  test("table, json (one array) and ndjson (one per line; --json the same) for list and events", async () => {
    await edge.api.createRun({ runId: "o-1" });
    await edge.api.createRun({ runId: "o-2" });
    const json = await run(["list", "--output", "json"]);
    const array = JSON.parse(json.stdout) as { runId: string }[];
    expect(lines(json.stdout)).toHaveLength(1);
    expect(array.map((r) => r.runId).slice(0, 2)).toEqual(["o-2", "o-1"]);
    const nd = await run(["list", "--output", "ndjson"]);
    expect(ndjson(nd.stdout)).toEqual(array);
    expect((await run(["list", "--json"])).stdout).toBe(nd.stdout);
    const table = await run(["list", "--output", "table"]);
    expect(lines(table.stdout)[0]).toMatch(/^RUN +STATUS +CREATED +UPDATED$/);
    expect((await run(["list", "--output", "json", "--json"])).code).toBe(64);

    const stored = await edge.api.events("o-1");
    expect(JSON.parse((await run(["events", "o-1", "--output", "json"])).stdout)).toEqual(stored);
    expect(ndjson<RunEvent>((await run(["events", "o-1", "--output", "ndjson"])).stdout)).toEqual(stored);
    expect(lines((await run(["events", "o-1"])).stdout)).toHaveLength(stored.length);
  });
});

describe("logs", () => {
  test("logs ID prints the log as events does; logs ID -f follows it until the run ends, as watch does", async () => {
    const { runner } = await edge.claimedRun({ runId: "g-1" });
    await runner.emit([{ type: "message", data: { role: "assistant", text: "hello" } }]);
    expect((await run(["logs", "g-1"])).stdout).toBe((await run(["events", "g-1"])).stdout);
    const follow = startCli(edge.url, ["logs", "g-1", "-f", "--json"]);
    await follow.waitForStdout("the followed log to show the message", (out) => out.includes('"hello"'));
    await runner.complete({ status: "succeeded", exitCode: 0 });
    expect(await follow.waitExit()).toBe(0);
    expect(ndjson<RunEvent>(follow.stdout())).toEqual(await edge.api.events("g-1"));
  });
});

describe("completion", () => {
  test("bash: completes commands, their flags and closed values, with no key", async () => {
    const script = await run(["completion", "bash"], { key: null });
    expect(script.code).toBe(0);
    const complete = (words: string[]) =>
      spawnSync(
        "bash",
        [
          "-c",
          `eval "$1"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _agent_run; echo "\${COMPREPLY[*]}"`,
          "bash",
          script.stdout,
        ],
        { encoding: "utf8" },
      ).stdout.trim();
    expect(complete(["agent-run", "wa"])).toBe("watch");
    expect(complete(["agent-run", "list", "--output", ""])).toBe("table json ndjson");
    expect(complete(["agent-run", "logs", "g-1", "--fo"])).toBe("--follow");
    expect(complete(["agent-run", "token", "x", "--role", ""])).toBe("viewer runner");
    expect(complete(["agent-run", "recover", "x", "re"])).toBe("resume restart");
  });

  test("zsh: completes commands, their flags and closed values in zsh's own completion system", async () => {
    const script = await run(["completion", "zsh"], { key: null });
    expect(script.code).toBe(0);
    expect(script.stdout.startsWith("#compdef agent-run\n")).toBe(true);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zsh-complete-"));
    const file = path.join(dir, "agent-run.zsh");
    fs.writeFileSync(file, script.stdout);
    const complete = (line: string) => {
      const done = spawnSync("zsh", [ZSH_COMPLETE, file, path.join(dir, "hits"), line], {
        encoding: "utf8",
        timeout: 30_000,
      });
      if (done.status !== 0) throw new Error(`zsh did not complete "${line}": ${done.stdout}${done.stderr}`);
      return done.stdout.trim().split("\n");
    };
    try {
      expect(complete("agent-run wa")).toEqual(["watch"]);
      expect(complete("agent-run list --output ")).toEqual(["json", "ndjson", "table"]);
      expect(complete("agent-run logs g-1 --fo")).toEqual(["--follow"]);
      expect(complete("agent-run token x --role ")).toEqual(["runner", "viewer"]);
      expect(complete("agent-run recover x re")).toEqual(["restart", "resume"]);
      expect(complete("agent-run completion ")).toEqual(["bash", "zsh"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
