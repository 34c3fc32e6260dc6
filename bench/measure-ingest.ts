/** Run-log ingest: runner WebSocket frames on ours, the same events as JSON POSTs on the reference. */
import { performance } from "node:perf_hooks";
import { appendJson, createJsonStream, streamUrl, UnexpectedResponse } from "./client.ts";
import { count, type Measurement } from "./measurement.ts";
import { runnerEvent } from "./payloads.ts";
import { openRunnerSocket } from "./runner-socket.ts";

export const runnerIngest: Measurement = {
  title: "runner ingest",
  rows: [
    {
      key: "ingest",
      label:
        "run-log ingest, 100-event frames: ours = runner WebSocket `events`→`ack`; reference = the same events as 100-event JSON POSTs (it has no runner socket)",
      unit: "events/s",
      higherIsBetter: true,
    },
  ],
  async run(target, scale) {
    const frames = count(60, scale);
    const limitMs = 15_000;
    const batchOf = (f: number) => Array.from({ length: 100 }, (_, k) => runnerEvent(f * 100 + k + 1));
    if (target.hasRunnerSocket) {
      const runner = await openRunnerSocket(target);
      try {
        const start = performance.now();
        let events = 0;
        for (let f = 0; f < frames && performance.now() - start < limitMs; f++) {
          runner.ws.send(JSON.stringify({ type: "events", epoch: runner.epoch, events: batchOf(f) }));
          const ack = await runner.next("ack");
          if (ack.highestSourceSeq !== (f + 1) * 100) {
            throw new UnexpectedResponse(
              `runner ack ${JSON.stringify(ack)} after frame ${f}, expected ${(f + 1) * 100}`,
            );
          }
          events += 100;
        }
        return { ingest: events / ((performance.now() - start) / 1000) };
      } finally {
        runner.ws.close();
      }
    }
    const url = streamUrl(target, "ingest");
    await createJsonStream(url);
    const start = performance.now();
    let events = 0;
    for (let f = 0; f < frames && performance.now() - start < limitMs; f++) {
      await appendJson(url, JSON.stringify(batchOf(f)));
      events += 100;
    }
    return { ingest: events / ((performance.now() - start) / 1000) };
  },
};
