/**
 * Builds the run console into console/dist: one bundled script, one stylesheet, index.html and
 * the icon. Every browser dependency is bundled here, so the page needs no network but its own
 * worker. `node console/build.ts` builds; `--if-stale` builds only when a source is newer than
 * the last build (the test setup uses it, so `npx vitest run` alone works on a fresh clone).
 */
import fs from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { headersFile } from "../src/security-headers.ts";

const ROOT = import.meta.dirname;
export const DIST = path.join(ROOT, "dist");
const STAMP = path.join(ROOT, ".built");
const INPUTS = [
  path.join(ROOT, "src"),
  path.join(ROOT, "public"),
  path.join(ROOT, "build.ts"),
  path.join(ROOT, "../src/security-headers.ts"),
  // bundled into the console too: the SDK's transcript fold and the wire types it reads
  path.join(ROOT, "../client/src"),
  path.join(ROOT, "../src/protocol"),
];

function newestMtime(entry: string): number {
  if (!fs.existsSync(entry)) return 0;
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of fs.readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, name)));
  return newest;
}

/** True when dist is missing or older than any source of the console. */
export function consoleIsStale(): boolean {
  if (!fs.existsSync(STAMP)) return true;
  const built = fs.statSync(STAMP).mtimeMs;
  return INPUTS.some((input) => newestMtime(input) > built);
}

export async function buildConsole(): Promise<void> {
  // dist/docs/ holds the API reference page's assets (npm run build:docs): not the console's to clean.
  for (const entry of fs.existsSync(DIST) ? fs.readdirSync(DIST) : []) {
    if (entry !== "docs") fs.rmSync(path.join(DIST, entry), { recursive: true, force: true });
  }
  fs.cpSync(path.join(ROOT, "public"), DIST, { recursive: true });
  // The static assets' security headers (CSP, no framing, no referrer, nosniff), applied by the
  // asset server to every file and to the single-page fallback, which never reach the worker.
  fs.writeFileSync(path.join(DIST, "_headers"), headersFile());
  await build({
    entryPoints: { app: path.join(ROOT, "src/main.tsx") },
    outdir: DIST,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["chrome110", "firefox115", "safari16"],
    minify: true,
    sourcemap: "linked",
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    logLevel: "warning",
    tsconfig: path.join(ROOT, "tsconfig.json"),
  });
  fs.writeFileSync(STAMP, new Date().toISOString());
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const ifStale = process.argv.includes("--if-stale");
  if (!ifStale || consoleIsStale()) {
    await buildConsole();
    console.log(`console built into ${path.relative(process.cwd(), DIST) || DIST}`);
  }
}
