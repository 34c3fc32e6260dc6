/**
 * One run, many viewer sockets: runner-send → viewer-receive latency at 1, 100 and 1,000 viewers,
 * the time to attach 1,000, and server memory per attached idle viewer. Every viewer must get
 * every event once and in order (checked, not timed).
 */
import { performance } from "node:perf_hooks";
import { count, type Measurement } from "./measurement.ts";
import { runnerEvent } from "./payloads.ts";
import { openRunnerSocket } from "./runner-socket.ts";
import { sleep } from "./sleep.ts";
import { percentile } from "./stats.ts";
import type { Target } from "./targets.ts";
import { openViewer, type Viewer, within } from "./viewer-socket.ts";

const SIZES = [1, 100, 1000] as const;
/** Events sent per size, one per frame, each after every viewer has the previous one. */
const EVENTS: Record<(typeof SIZES)[number], number> = { 1: 100, 100: 50, 1000: 20 };
const ATTACHING_AT_ONCE = 100;
/** Targets whose memory per viewer was read (in their first full 1,000-viewer pass). */
const memoryRead = new Set<string>();

async function fanOut(target: Target, viewers: number, events: number) {
  const runner = await openRunnerSocket(target);
  const sentAt = new Map<number, number>();
  const received = new Map<number, number>();
  const latencies: number[] = [];
  let waiting: { sourceSeq: number; resolve: () => void } | null = null;
  const onRunnerEvent = (sourceSeq: number, at: number) => {
    const sent = sentAt.get(sourceSeq);
    if (sent !== undefined) latencies.push(at - sent);
    const got = (received.get(sourceSeq) ?? 0) + 1;
    received.set(sourceSeq, got);
    if (waiting?.sourceSeq === sourceSeq && got === viewers) waiting.resolve();
  };
  const opened: Viewer[] = [];
  let result: { p50: number; p99: number; attachMs: number; perViewerKB: number };
  try {
    const rssBefore = target.rss();
    const start = performance.now();
    for (let i = 0; i < viewers; i += ATTACHING_AT_ONCE) {
      const batch = Array.from({ length: Math.min(ATTACHING_AT_ONCE, viewers - i) }, () =>
        openViewer(target, runner.run, onRunnerEvent),
      );
      opened.push(...batch);
      await within(Promise.all(batch.map((v) => v.attached)), 60_000, `viewers ${i + 1}–${i + batch.length} attaching`);
    }
    const attachMs = performance.now() - start;
    await sleep(1_000); // let the attach traffic settle before reading memory
    const rssAttached = target.rss();

    for (let s = 1; s <= events; s++) {
      const everyone = new Promise<void>((resolve) => (waiting = { sourceSeq: s, resolve }));
      sentAt.set(s, performance.now());
      await runner.sendEvents([runnerEvent(s)], s);
      await within(everyone, 10_000, `all ${viewers} viewers receiving event ${s}`);
    }
    await runner.complete();
    await within(Promise.all(opened.map((v) => v.ended)), 60_000, `all ${viewers} viewers receiving end`);
    const expected = opened[0]?.seqs ?? [];
    if (expected.some((seq, i) => seq !== i + 1)) throw new Error(`viewer saw seqs ${expected.join(",")}`);
    const wrong = opened.findIndex((v) => v.seqs.length !== expected.length || v.seqs.some((seq, i) => seq !== i + 1));
    if (wrong >= 0)
      throw new Error(`viewer ${wrong} saw ${opened[wrong]?.seqs.join(",")}; viewer 0 saw ${expected.join(",")}`);
    result = {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      attachMs,
      perViewerKB: (rssAttached - rssBefore) / 1024 / viewers,
    };
  } finally {
    runner.ws.close();
    for (const v of opened) v.close();
  }
  // workerd ends a closed hibernatable socket's connection only when its object is evicted (~10 s
  // idle): wait for that, so the next pass does not share the isolate with this pass's sockets.
  // Three runs' thousand lingering sockets made a collection 300 ms instead of 60 (a later pass's p99).
  await within(Promise.all(opened.map((v) => v.closed)), 30_000, `the ${viewers} viewer connections of a pass ending`);
  return result;
}

export const viewerFanOut: Measurement = {
  id: "viewers",
  title: "viewer fan-out: one run, many viewer sockets",
  oursOnly: true,
  maxRounds: 3,
  rows: [
    ...SIZES.flatMap((n) => [
      {
        key: `fan${n}P50`,
        label: `runner send → viewer receive, ${n.toLocaleString("en-US")} viewer${n > 1 ? "s" : ""} on one run, p50`,
        unit: "ms",
        higherIsBetter: false,
      },
      {
        key: `fan${n}P99`,
        label: `runner send → viewer receive, ${n.toLocaleString("en-US")} viewer${n > 1 ? "s" : ""} on one run, p99`,
        unit: "ms",
        higherIsBetter: false,
      },
    ]),
    {
      key: "attach1000",
      label: `time to attach 1,000 viewers to one run (replay, then live; ${ATTACHING_AT_ONCE} opening at a time)`,
      unit: "ms",
      higherIsBetter: false,
    },
    {
      key: "idleViewerKB",
      label: "server memory per attached idle viewer (workerd RSS growth over 1,000 viewers, in the first full pass)",
      unit: "KB",
      higherIsBetter: false,
    },
  ],
  async run(target, scale) {
    const values: Record<string, number> = {};
    for (const size of SIZES) {
      const result = await fanOut(target, count(size, scale), count(EVENTS[size], scale < 1 ? 0.25 : 1));
      values[`fan${size}P50`] = result.p50;
      values[`fan${size}P99`] = result.p99;
      if (size === 1000) {
        values.attach1000 = result.attachMs;
        // RSS growth is read in a target's first full pass only: in later ones the garbage of the
        // passes before is collected while the thousand attach, and RSS falls instead of growing.
        if (scale === 1 && !memoryRead.has(target.name)) {
          memoryRead.add(target.name);
          values.idleViewerKB = result.perViewerKB;
        }
      }
    }
    return values;
  },
};
