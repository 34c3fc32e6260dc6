import { describe, expect, test } from "vitest";
import { cli, expectExit, lines, ndjson, startCli } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";

// What the CLI shows of usage (get, list, watch) and how `list` filters.

const edge = useEdge();
const run = (args: string[]) => cli(edge.url, args);
const report = (data: Record<string, unknown>) => ({ type: "agent.usage", data });

describe("usage in the CLI", () => {
  test("get shows tokens, cost, budget and tags; watch tallies reports as they pass and at the end", async () => {
    const { run: created, runner } = await edge.claimedRun({
      runId: "u-1",
      tags: ["nightly"],
      budget: { maxTokens: 100_000, maxCostUsd: 2 },
    });
    const watch = startCli(edge.url, ["watch", created.id]);
    await runner.emit([
      report({ inputTokens: 1200, cachedInputTokens: 800, outputTokens: 90, costUsd: 0.0042 }),
      report({ inputTokens: 300, outputTokens: 10, reasoningTokens: 4, costUsd: 0.0008 }),
    ]);
    const shown = await run(["get", created.id]);
    expect(shown.stdout).toMatch(/^usage +1,500 in \(800 cached\) · 100 out \(4 reasoning\) · \$0\.005$/m);
    expect(shown.stdout).toMatch(/^budget +100,000 tokens · \$2$/m);
    expect(shown.stdout).toMatch(/^tags +nightly$/m);
    await runner.complete({ status: "succeeded", exitCode: 0 });
    await expectExit(watch, 0);
    const out = lines(watch.stdout());
    expect(out.filter((line) => line.includes("usage ·"))).toEqual([
      expect.stringMatching(/usage · run so far 1,200 in \(800 cached\) · 90 out · \$0\.0042$/),
      expect.stringMatching(/usage · run so far 1,500 in \(800 cached\) · 100 out \(4 reasoning\) · \$0\.005$/),
      expect.stringMatching(/usage · 1,500 in \(800 cached\) · 100 out \(4 reasoning\) · \$0\.005$/),
    ]);
  });

  test("list filters by tag, meta, agent, status and creation time; the table has tokens and cost", async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    await edge.api.createRun({ runId: "f-1", agent: { name: "lister" }, tags: ["a", "b"], metadata: { repo: "x" } });
    await edge.api.createRun({ runId: "f-2", agent: { name: "lister" }, tags: ["a"], metadata: { repo: "y" } });
    await edge.api.createRun({ runId: "f-3", agent: { name: "other" }, tags: ["a", "b"], metadata: { repo: "x" } });
    const ids = async (args: string[]) => {
      const out = await run(["list", "--all", "--json", ...args]);
      expect(out.code, out.stderr).toBe(0);
      return ndjson<{ runId: string }>(out.stdout).map((r) => r.runId);
    };
    expect(await ids(["--tag", "a", "--tag", "b"])).toEqual(["f-3", "f-1"]);
    expect(await ids(["--tag", "a", "--meta", "repo=x", "--agent", "lister"])).toEqual(["f-1"]);
    expect(await ids(["--agent", "lister", "--status", "queued", "--created-after", before])).toEqual(["f-2", "f-1"]);
    expect(await ids(["--tag", "a", "--created-before", before])).toEqual([]);
    const table = await run(["list", "--tag", "b"]);
    expect(lines(table.stdout)[0]).toMatch(/^RUN +STATUS +CREATED +UPDATED +TOKENS +COST$/);
    expect(lines(table.stdout)[1]).toMatch(/^f-3 +queued +\S+ ago +\S+ ago +0 +—$/);
    const bad = await run(["list", "--meta", "repo"]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain("--meta takes KEY=VALUE");
  });

  test("create takes --tag, --max-tokens and --max-cost; a bad one is refused naming the flag", async () => {
    const out = await run([
      "create",
      "--id",
      "u-c",
      "--tag",
      "x",
      "--tag",
      "y",
      "--max-tokens",
      "5000",
      "--max-cost",
      "1.5",
      "--json",
    ]);
    expect(out.code, out.stderr).toBe(0);
    expect(await edge.api.getRun("u-c")).toMatchObject({
      tags: ["x", "y"],
      budget: { maxTokens: 5000, maxCostUsd: 1.5 },
    });
    const bad = await run(["create", "--tag", "has space"]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain("--tag");
    expect((await run(["create", "--max-cost", "lots"])).stderr).toContain("--max-cost takes a number");
  });
});
