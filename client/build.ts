/**
 * `npm pack` for the SDK: bundles client/src (with the src/protocol modules it imports) into
 * dist/ as ES modules, zod left external, emits .d.ts files with tsc, and points the packed
 * package.json's `exports` at dist/. In the repository the workspace keeps resolving to the
 * TypeScript sources: packing saves package.json, `node build.ts restore` (postpack) puts it back.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const HERE = import.meta.dirname;
const DIST = path.join(HERE, "dist");
const MANIFEST = path.join(HERE, "package.json");
const SAVED = path.join(HERE, "package.json.src");
const ENTRIES = { index: "src/index.ts", transcript: "src/transcript/index.ts" };

async function pack(): Promise<void> {
  fs.rmSync(DIST, { recursive: true, force: true });
  await build({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(HERE, file)])),
    outdir: DIST,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "neutral",
    target: "es2023",
    external: ["zod"],
    logLevel: "warning",
  });
  const tsc = path.join(HERE, "../node_modules/typescript/bin/tsc");
  const files = Object.values(ENTRIES).map((file) => path.join(HERE, file));
  execFileSync(
    process.execPath,
    [
      tsc,
      ...["--declaration", "--emitDeclarationOnly", "--rewriteRelativeImportExtensions", "--skipLibCheck"],
      ...["--target", "es2023", "--module", "esnext", "--moduleResolution", "bundler", "--strict"],
      ...["--types", "node", "--rootDir", path.join(HERE, ".."), "--outDir", path.join(DIST, "types")],
      ...files,
    ],
    { stdio: "inherit" },
  );
  const manifest = JSON.parse(fs.readFileSync(MANIFEST, "utf8")) as Record<string, unknown>;
  if (!fs.existsSync(SAVED)) fs.copyFileSync(MANIFEST, SAVED);
  manifest.exports = {
    ".": { types: "./dist/types/client/src/index.d.ts", import: "./dist/index.js" },
    "./transcript": { types: "./dist/types/client/src/transcript/index.d.ts", import: "./dist/transcript.js" },
  };
  manifest.files = ["dist"];
  fs.writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** After packing: the source manifest back, and no build output left for lint or tsc to read. */
function restore(): void {
  if (fs.existsSync(SAVED)) fs.renameSync(SAVED, MANIFEST);
  fs.rmSync(DIST, { recursive: true, force: true });
}

if (process.argv[2] === "restore") restore();
else await pack();
