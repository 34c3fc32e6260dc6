import { readFileSync } from "node:fs";

/** agent-run's version, from its package.json (`agent-run --version`). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
