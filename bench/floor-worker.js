// The smallest possible worker: every request is a 404. The bench serves it on each platform
// (plain workerd, wrangler dev) to measure what any request costs there before our code runs.
export default {
  fetch() {
    return new Response("not found", { status: 404 });
  },
};
