/** Bench only (`--meter`): the main module that wraps the bundle with serve/meter.js. */
import fs from "node:fs";
import path from "node:path";
import { REPO } from "./build.ts";
import type { WorkerSpec } from "./worker-spec.ts";

/** Writes `meter.js` and `meter-entry.js` next to `worker.js`; returns the modules, main first. */
export function writeMeterEntry(buildDir: string, spec: WorkerSpec): string[] {
  fs.copyFileSync(path.join(REPO, "serve/meter.js"), path.join(buildDir, "meter.js"));
  const bindings = Object.fromEntries(spec.durableObjects.map((d) => [d.binding, d.className]));
  const classes = [...new Set(spec.durableObjects.map((d) => d.className))];
  const lines = [
    'import * as worker from "./worker.js";',
    'import { meterClass, meterWorker } from "./meter.js";',
    `const bindings = ${JSON.stringify(bindings)};`,
    "export default meterWorker(worker.default, bindings);",
    ...classes.map((c) => `export const ${c} = meterClass(worker.${c}, ${JSON.stringify(c)}, bindings);`),
  ];
  fs.writeFileSync(path.join(buildDir, "meter-entry.js"), `${lines.join("\n")}\n`);
  return ["meter-entry.js", "worker.js", "meter.js"];
}
