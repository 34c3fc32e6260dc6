import { buildConsole, consoleIsStale } from "../../console/build.ts";

/**
 * Vitest global setup: every `wrangler dev` the tests start (and the edge pool, which reads
 * wrangler.toml's [assets]) serves console/dist, so build it first when it is missing or older
 * than its sources. `npm test` builds in `pretest` already; this covers `npx vitest run`.
 */
export default async function setup(): Promise<void> {
  if (consoleIsStale()) await buildConsole();
}
