import { afterEach, describe, expect, test } from "vitest";
import { startPoolHost, type PoolHostProcess } from "../pools/harness.ts";
import { cli, lines, ndjson } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";

const edge = useEdge();
const run = (args: string[]) => cli(edge.url, args);
const hosts: PoolHostProcess[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.destroy();
});

describe("pools and queues", () => {
  test("queue NAME --max-concurrent sets the limit; queues lists it; bad limits are usage errors", async () => {
    const set = await run(["queue", "cli-q", "--max-concurrent", "2"]);
    expect(set).toMatchObject({ code: 0, stderr: "" });
    expect(lines(set.stdout)).toEqual([
      "QUEUE  QUEUED  RUNNING  LIMIT  HOSTS  FREE SLOTS",
      "cli-q  0       0        2      0      0",
    ]);
    const listed = await run(["queues", "--json"]);
    expect(ndjson(listed.stdout)).toContainEqual(expect.objectContaining({ name: "cli-q", maxConcurrent: 2 }));
    const cleared = await run(["queue", "cli-q", "--max-concurrent", "none", "--json"]);
    expect(ndjson(cleared.stdout)).toEqual([expect.objectContaining({ name: "cli-q", maxConcurrent: null })]);
    for (const bad of ["0", "-1", "two"]) {
      const refused = await run(["queue", "cli-q", `--max-concurrent=${bad}`]);
      expect(refused.code, bad).toBe(64);
      expect(refused.stderr).toMatch(/^agent-run: --max-concurrent needs a whole number of at least 1, or none/);
    }
    const badName = await run(["queue", "Not A Queue"]);
    expect(badName.code).toBe(4);
  });

  test("pools lists the connected hosts with their profiles and slots; a run created with --agent lands there", async () => {
    expect(lines((await run(["pools"])).stdout)[0]).toMatch(/^no pool hosts connected/);
    const { key } = await edge.api.ok<{ key: string }>("POST", "/v1/pool-keys", {});
    const host = startPoolHost(edge.url, { key, slots: 2 });
    hosts.push(host);
    const hostId = await host.hostId();
    const created = await run([
      "create",
      "--agent",
      "scripted",
      "--prompt",
      JSON.stringify([{ out: "from the cli" }]),
      "--json",
    ]);
    expect(created.code).toBe(0);
    const runId = (ndjson<{ run: { id: string } }>(created.stdout)[0] as { run: { id: string } }).run.id;
    await edge.api.waitForStatus(runId, "succeeded", 60_000);
    const listed = await run(["pools"]);
    expect(listed.code).toBe(0);
    const [header, row] = lines(listed.stdout);
    expect(header).toMatch(/^HOST +QUEUE +PROFILES +SLOTS +CONNECTED +RUNS$/);
    expect(row).toMatch(new RegExp(`^${hostId.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} +default +scripted +0/2 busy +`));
    expect(ndjson((await run(["pools", "--json"])).stdout)).toEqual([
      expect.objectContaining({ hostId, queue: "default", profiles: ["scripted"], slots: 2 }),
    ]);
  });
});
