/** The production bundle, built exactly as `wrangler deploy` would upload it (`--dry-run --outdir`). */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export const REPO = path.resolve(import.meta.dirname, "..");

export class BuildFailed extends Error {}

/** Builds into `outDir` and returns the bundle's main module file name (relative to `outDir`). */
export function buildBundle(configPath: string, outDir: string): string {
  const wrangler = path.join(REPO, "node_modules/wrangler/bin/wrangler.js");
  const result = spawnSync(
    process.execPath,
    [wrangler, "deploy", "--dry-run", "--outdir", outDir, "--config", configPath],
    {
      cwd: path.dirname(configPath),
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_LOG: "warn", CI: "1" },
      timeout: 120_000,
    },
  );
  if (result.status !== 0) {
    const output = `${result.stdout ?? ""}${result.stderr ?? ""}`.trim().split("\n").slice(-30).join("\n");
    throw new BuildFailed(
      `wrangler deploy --dry-run failed (${result.error?.message ?? `exit ${result.status}`}):\n${output}`,
    );
  }
  const files = fs.readdirSync(outDir).filter((f) => !f.endsWith(".map") && f !== "README.md");
  const modules = files.filter((f) => /\.m?js$/.test(f));
  const others = files.filter((f) => !modules.includes(f));
  if (modules.length !== 1 || others.length > 0) {
    throw new BuildFailed(`expected one JavaScript module in the bundle, found: ${files.join(", ")}`);
  }
  return modules[0] as string;
}
