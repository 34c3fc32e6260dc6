import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "./harness/bridge.ts";
import { useEdge } from "./harness/context.ts";
import { REPO } from "./harness/edge.ts";
import { textLine } from "./harness/ndjson-events.ts";

const t = useEdge();

function filesUnder(root: string): string[] {
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe("packing runner-bridge on its own", () => {
  it("packs without the repository's sources and the packed copy runs a whole run", async () => {
    const out = tempDir("bridge-pack-");
    const dist = path.join(REPO, "runner-bridge/dist");
    const hadDist = fs.existsSync(dist);
    try {
      execFileSync("npm", ["pack", "--pack-destination", out, "-w", "runner-bridge"], { cwd: REPO, stdio: "pipe" });
    } finally {
      if (!hadDist) fs.rmSync(dist, { recursive: true, force: true }); // prepack's build output
    }
    const tarball = fs.readdirSync(out).find((name) => name.endsWith(".tgz"));
    expect(tarball, `npm pack left no tarball in ${out}`).toBeDefined();
    execFileSync("tar", ["-xzf", path.join(out, tarball as string), "-C", out]);
    const unpacked = path.join(out, "package");
    expect(filesUnder(unpacked)).toEqual([
      "bin/runner-bridge.mjs",
      "dist/cli.mjs",
      "dist/supervisor.mjs",
      "package.json",
    ]);
    // The shared protocol is bundled in, not imported from a repository that is not there.
    expect(fs.readFileSync(path.join(unpacked, "dist/cli.mjs"), "utf8")).not.toMatch(/from\s+["'][^"']*src\/protocol/);
    const manifest = JSON.parse(fs.readFileSync(path.join(unpacked, "package.json"), "utf8"));
    expect(Object.keys(manifest.dependencies)).toEqual(["zod"]);
    // Its one dependency, as `npm install` of the tarball would provide it.
    fs.mkdirSync(path.join(unpacked, "node_modules"));
    fs.symlinkSync(path.join(REPO, "node_modules/zod"), path.join(unpacked, "node_modules/zod"));

    const lines = ['{"type":"RUN_STARTED"}', "packed and running", '{"type":"RUN_FINISHED"}'];
    const { run, bridge } = await t.startRun({
      agent: t.agent(lines.map((line) => ({ out: line }))),
      bin: path.join(unpacked, "bin/runner-bridge.mjs"),
    });
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual([
      { sourceSeq: 1, type: "RUN_STARTED", data: {} },
      textLine(2, "packed and running"),
      { sourceSeq: 3, type: "RUN_FINISHED", data: {} },
    ]);
    expect((await t.api.getRun(run.id)).status).toBe("succeeded");
  });
});
