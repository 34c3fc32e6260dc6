/**
 * Puts the API reference page's assets into the static-asset build: Swagger UI's bundle and
 * stylesheet, copied from the swagger-ui-dist package into console/dist/docs/ (the worker serves
 * /docs itself and hands /docs/* to the static assets). Nothing is fetched at run time, so the
 * page works offline. Only console/dist/docs/ is written or cleaned here; the console's build
 * leaves it alone. `node src/openapi/build-docs.ts` builds; the test setup builds when missing.
 */
import fs from "node:fs";
import path from "node:path";
import { DOCS_ASSETS } from "./docs-page.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
export const DOCS_DIST = path.join(ROOT, "console/dist/docs");
const SOURCE = path.join(ROOT, "node_modules/swagger-ui-dist");
const STAMP = ".swagger-ui-version";

function sourceVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(SOURCE, "package.json"), "utf8")) as { version: string }).version;
}

/** True when the assets are missing or come from another version of swagger-ui-dist. */
export function docsAreStale(): boolean {
  const stamp = path.join(DOCS_DIST, STAMP);
  return !fs.existsSync(stamp) || fs.readFileSync(stamp, "utf8") !== sourceVersion();
}

export function buildDocs(): void {
  fs.rmSync(DOCS_DIST, { recursive: true, force: true });
  fs.mkdirSync(DOCS_DIST, { recursive: true });
  for (const file of DOCS_ASSETS) fs.copyFileSync(path.join(SOURCE, file), path.join(DOCS_DIST, file));
  fs.writeFileSync(path.join(DOCS_DIST, STAMP), sourceVersion());
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  buildDocs();
  console.log(`API reference assets in ${path.relative(process.cwd(), DOCS_DIST)}`);
}
