/**
 * The smallest possible worker: every request is a 404. `bench/run.ts` runs it under its own
 * `wrangler dev` to measure the local platform's per-request floor (workerd + wrangler's dev
 * proxy), which every request to our worker pays too.
 */
export default {
  fetch(): Response {
    return new Response("not found", { status: 404 });
  },
};
