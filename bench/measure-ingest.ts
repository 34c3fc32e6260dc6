/** Run-log ingest: runner WebSocket frames on ours, the same events as JSON POSTs on the reference. */
import { performance } from "node:perf_hooks";
import { appendJson, createJsonStream, streamUrl } from "./client.ts";
import { count, type Measurement } from "./measurement.ts";
import { runnerEvent } from "./payloads.ts";
import { openRunnerSocket } from "./runner-socket.ts";

/** The shape: 500-event frames (the protocol's largest batch), each acked before the next. */
const FRAME = 500;

export const runnerIngest: Measurement = {
  id: "ingest",
  title: "runner ingest",
  rows: [
    {
      key: "ingest",
      label: `runner-socket ingest, ${FRAME}-event frames of ~150-byte AG-UI events, each acked before the next; reference: the same events as ${FRAME}-event JSON POSTs (it has no runner socket)`,
      unit: "events/s",
      higherIsBetter: true,
    },
    {
      key: "ingestCpu",
      label: "runner-socket ingest, same: server process CPU per 1,000 events (user + system, all its threads)",
      unit: "ms",
      higherIsBetter: false,
    },
  ],
  async run(target, scale) {
    // 100,000 events: CPU is counted in 10 ms steps per process, which 20,000 made 0.5 ms per 1,000.
    const frames = count(200, scale);
    const limitMs = 15_000;
    const batchOf = (f: number) => Array.from({ length: FRAME }, (_, k) => runnerEvent(f * FRAME + k + 1));
    if (target.ours) {
      const runner = await openRunnerSocket(target);
      try {
        const cpu = target.cpuMs();
        const start = performance.now();
        let events = 0;
        for (let f = 0; f < frames && performance.now() - start < limitMs; f++) {
          await runner.sendEvents(batchOf(f), (f + 1) * FRAME);
          events += FRAME;
        }
        const seconds = (performance.now() - start) / 1000;
        return { ingest: events / seconds, ingestCpu: ((target.cpuMs() - cpu) / events) * 1000 };
      } finally {
        runner.ws.close();
      }
    }
    const url = streamUrl(target, "ingest");
    await createJsonStream(url);
    const cpu = target.cpuMs();
    const start = performance.now();
    let events = 0;
    for (let f = 0; f < frames && performance.now() - start < limitMs; f++) {
      await appendJson(url, JSON.stringify(batchOf(f)));
      events += FRAME;
    }
    const seconds = (performance.now() - start) / 1000;
    return { ingest: events / seconds, ingestCpu: ((target.cpuMs() - cpu) / events) * 1000 };
  },
};
