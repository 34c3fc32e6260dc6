/** Request-rate measurements: bare round trips (the baseline), single appends, batched appends. */
import { performance } from "node:perf_hooks";
import { appendJson, call, createJsonStream, streamUrl } from "./client.ts";
import { count, type Measurement } from "./measurement.ts";
import { agentEvent } from "./payloads.ts";
import type { Target } from "./targets.ts";

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

/**
 * `post` over bodies 0, 1, 2… while `n` fit within `limitMs`: requests per second, and the
 * server's CPU per request in µs (`cpuMs`: its processes' user + system time, in 10 ms ticks).
 */
async function timedPosts(
  post: (index: number) => Promise<unknown>,
  cpuMs: () => number,
  n: number,
  limitMs: number,
): Promise<{ perSecond: number; cpuUs: number }> {
  const cpu = cpuMs();
  const start = performance.now();
  let done = 0;
  while (done < n && performance.now() - start < limitMs) {
    await post(done);
    done += 1;
  }
  return { perSecond: done / ((performance.now() - start) / 1000), cpuUs: ((cpuMs() - cpu) / done) * 1000 };
}

/**
 * `n` POSTs of `body(i)` to our stream `url`, then the same bodies to the target's floor worker (when
 * it has one): each side's requests per second and server CPU per request.
 */
async function oursAndFloor(
  target: Target,
  url: string,
  body: (index: number) => string,
  n: number,
  limitMs: number,
): Promise<{ ours: { perSecond: number; cpuUs: number }; floor: { perSecond: number; cpuUs: number } | null }> {
  const ours = await timedPosts(
    (i) => appendJson(url, body(i)),
    () => target.cpuMs(),
    n,
    limitMs,
  );
  const floor = target.floor;
  if (!floor) return { ours, floor: null };
  return {
    ours,
    floor: await timedPosts(
      (i) => floorStore(floor.url, body(i)),
      () => floor.cpuMs(),
      n,
      limitMs,
    ),
  };
}

const CPU_NOTE = "server process CPU (user + system, all its threads)";

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
    { key: "singleCpu", label: `sequential single appends: ${CPU_NOTE} per append`, unit: "µs", higherIsBetter: false },
    {
      key: "singleFloorCpu",
      label: `sequential single appends, the platform's floor: ${CPU_NOTE} per POST`,
      unit: "µs",
      higherIsBetter: false,
    },
  ],
  async run(target, scale) {
    const url = streamUrl(target, "single");
    await createJsonStream(url);
    const { ours, floor } = await oursAndFloor(
      target,
      url,
      (i) => JSON.stringify(agentEvent(i)),
      count(800, scale),
      10_000,
    );
    const result: Record<string, number> = { single: ours.perSecond, singleCpu: ours.cpuUs };
    if (floor) {
      result.singleFloor = floor.perSecond;
      result.singleFloorCpu = floor.cpuUs;
    }
    return result;
  },
};

/** A batch of 100 events, the `index`th. */
const batchOf = (index: number) => JSON.stringify(Array.from({ length: 100 }, (_, k) => agentEvent(index * 100 + k)));

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
    { key: "batchedCpu", label: `100-event batched appends: ${CPU_NOTE} per POST`, unit: "µs", higherIsBetter: false },
    {
      key: "batchedFloorCpu",
      label: `100-event batched appends, the platform's floor: ${CPU_NOTE} per POST`,
      unit: "µs",
      higherIsBetter: false,
    },
  ],
  async run(target, scale) {
    const url = streamUrl(target, "batched");
    await createJsonStream(url);
    // 300 POSTs: CPU is counted in 10 ms ticks, a few per hundred POSTs.
    const { ours, floor } = await oursAndFloor(target, url, batchOf, count(300, scale), 15_000);
    const result: Record<string, number> = { batched: ours.perSecond * 100, batchedCpu: ours.cpuUs };
    if (floor) {
      result.batchedFloor = floor.perSecond * 100;
      result.batchedFloorCpu = floor.cpuUs;
    }
    return result;
  },
};
