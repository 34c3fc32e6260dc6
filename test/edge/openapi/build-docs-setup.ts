import { buildDocs, docsAreStale } from "../../../src/openapi/build-docs.ts";

/**
 * Vitest global setup: the edge pool and every `wrangler dev` serve console/dist, where the API
 * reference page's assets live; copy them when missing. `npm test` does it in `pretest` already.
 */
export default function setup(): void {
  if (docsAreStale()) buildDocs();
}
