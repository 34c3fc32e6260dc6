/** Request-rate measurements: bare round trips (the baseline), single appends, batched appends. */
import { performance } from "node:perf_hooks";
import { appendJson, call, createJsonStream, streamUrl } from "./client.ts";
import { count, type Measurement } from "./measurement.ts";
import { agentEvent } from "./payloads.ts";

/**
 * Not one of the asked-for comparisons: bare request round trips, to read the others against.
 * GET, not HEAD: under `wrangler dev` every HEAD response carries `connection: close`, so a HEAD
 * loop would time TCP connects too.
 */
export const roundTrips: Measurement = {
  id: "baseline",
  title: "baseline: request round trips",
  rows: [
    {
      key: "floor",
      label:
        "baseline: GET → 404 from a one-line worker (`bench/floor-worker.js`) on the same platform (serve: plain workerd; dev: its own `wrangler dev`), i.e. the platform's floor; reference columns: the reference's 404",
      unit: "ops/s",
      higherIsBetter: true,
    },
    {
      key: "rt404",
      label:
        "baseline: sequential GET of an unknown /v1 path (ours: the worker's router and auth, 401, no Durable Object; reference: 404)",
      unit: "ops/s",
      higherIsBetter: true,
    },
    {
      key: "rtEmpty",
      label: "baseline: sequential catch-up GET of an empty stream (no storage write)",
      unit: "ops/s",
      higherIsBetter: true,
    },
  ],
  async run(target, scale) {
    const url = streamUrl(target, "empty");
    await createJsonStream(url);
    const loop = async (requestUrl: string, expect: number[]) => {
      const n = count(300, scale);
      const limitMs = 8_000;
      const start = performance.now();
      let done = 0;
      while (done < n && performance.now() - start < limitMs) {
        const res = await call("GET", requestUrl, { expect });
        await res.arrayBuffer();
        done += 1;
      }
      return done / ((performance.now() - start) / 1000);
    };
    // Under /v1, so the worker answers first (no static-asset lookup): ours refuses it in its
    // router and auth (401, no credentials), the reference with a 404.
    const rt404 = await loop(`${target.url}/v1/no-such-route-${process.pid}`, [401, 404]);
    const rtEmpty = await loop(`${url}?offset=-1`, [200]);
    const floor = target.floor ? await loop(`${target.floor.url}/x`, [404]) : rt404;
    return { floor, rt404, rtEmpty };
  },
};

/** A POST of `body` to the floor worker's object (bench/floor-worker.js), which stores it. */
async function floorStore(floorUrl: string, body: string): Promise<void> {
  const res = await call("POST", `${floorUrl}/store`, {
    body,
    headers: { "content-type": "application/json" },
    expect: [204],
  });
  await res.arrayBuffer();
}

export const sequentialSingle: Measurement = {
  id: "single",
  title: "sequential single appends",
  rows: [
    {
      key: "single",
      label: "sequential single appends (1 JSON message per POST)",
      unit: "ops/s",
      higherIsBetter: true,
    },
    {
      key: "singleFloor",
      label:
        "sequential single appends, the platform's floor: the same POSTs to a one-line worker that hands each body to a Durable Object storing it in one INSERT (`bench/floor-worker.js`; ours only)",
      unit: "ops/s",
      higherIsBetter: true,
    },
  ],
  async run(target, scale) {
    const url = streamUrl(target, "single");
    await createJsonStream(url);
    const rate = async (post: (body: string) => Promise<unknown>) => {
      const n = count(400, scale);
      const limitMs = 10_000;
      const start = performance.now();
      let done = 0;
      while (done < n && performance.now() - start < limitMs) {
        await post(JSON.stringify(agentEvent(done)));
        done += 1;
      }
      return done / ((performance.now() - start) / 1000);
    };
    const single = await rate((body) => appendJson(url, body));
    const floor = target.floor?.url;
    return floor ? { single, singleFloor: await rate((body) => floorStore(floor, body)) } : { single };
  },
};

/** 100-event POSTs to `post(body)`, as many as fit the bounds: events per second. */
async function batchedRate(post: (body: string) => Promise<unknown>, scale: number): Promise<number> {
  const batches = count(60, scale);
  const limitMs = 15_000;
  const start = performance.now();
  let events = 0;
  for (let b = 0; b < batches && performance.now() - start < limitMs; b++) {
    const batch = Array.from({ length: 100 }, (_, k) => agentEvent(b * 100 + k));
    await post(JSON.stringify(batch));
    events += 100;
  }
  return events / ((performance.now() - start) / 1000);
}

export const batched: Measurement = {
  id: "batched",
  title: "100-event batched appends",
  rows: [
    { key: "batched", label: "100-event batched appends (JSON array POST)", unit: "events/s", higherIsBetter: true },
    {
      key: "batchedFloor",
      label:
        "100-event batched appends, the platform's floor: the same POSTs to a one-line worker that hands each body to a Durable Object storing it in one INSERT (`bench/floor-worker.js`; ours only)",
      unit: "events/s",
      higherIsBetter: true,
    },
  ],
  async run(target, scale) {
    const url = streamUrl(target, "batched");
    await createJsonStream(url);
    const rate = await batchedRate((body) => appendJson(url, body), scale);
    const floor = target.floor?.url;
    return floor
      ? { batched: rate, batchedFloor: await batchedRate((body) => floorStore(floor, body), scale) }
      : { batched: rate };
  },
};
