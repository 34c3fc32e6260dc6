import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { buildBundle, REPO } from "../../serve/build.ts";

const out = fs.mkdtempSync(path.join(os.tmpdir(), "bundle-"));
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

describe("the production bundle (wrangler deploy --dry-run)", () => {
  it("is minified, with a source map naming our sources, which deploy uploads", () => {
    const main = buildBundle(path.join(REPO, "wrangler.toml"), out);
    const code = fs.readFileSync(path.join(out, main), "utf8");
    // Unminified it is about 1.1 MiB; minified about 650 KiB.
    expect(code.length).toBeLessThan(800 * 1024);
    // Minified lines are long (template literals keep a few newlines); unminified they average ~30 characters.
    expect(code.length / code.split("\n").length).toBeGreaterThan(1000);
    const map = JSON.parse(fs.readFileSync(path.join(out, `${main}.map`), "utf8")) as { sources: string[] };
    expect(map.sources.some((source) => source.endsWith("src/worker.ts"))).toBe(true);
    const config = unstable_readConfig({ config: path.join(REPO, "wrangler.toml") });
    expect([config.minify, config.upload_source_maps]).toEqual([true, true]);
  });

  it("names no compatibility flag its date already implies (workerd warns about each at startup)", () => {
    const config = unstable_readConfig({ config: path.join(REPO, "wrangler.toml") });
    expect(config.compatibility_date >= "2026-08-04").toBe(true);
    expect(config.compatibility_flags).not.toContain("nodejs_compat");
  });
});
