import { MAX_BATCH_EVENTS, type RunnerEvent } from "../../src/protocol/index.ts";
import { TEXT_EVENT } from "./adapters/common.ts";

/** Keep a frame comfortably under the edge's 1 MiB limit. */
export const MAX_FRAME_PAYLOAD = 900 * 1024;
const MAX_EVENT_BYTES = 800 * 1024;

/** The next `events` batch starting at `from`: at most 500 events and ~900 KiB. */
export function nextBatch(events: readonly RunnerEvent[], from: number): RunnerEvent[] {
  const batch: RunnerEvent[] = [];
  let bytes = 0;
  for (let i = from; i < events.length && batch.length < MAX_BATCH_EVENTS; i++) {
    const event = events[i] as RunnerEvent;
    const size = Buffer.byteLength(JSON.stringify(event));
    if (batch.length > 0 && bytes + size > MAX_FRAME_PAYLOAD) break;
    batch.push(event);
    bytes += size;
  }
  return batch;
}

/** An event too large for a frame becomes a (deterministically) truncated text event. */
export function fitEvent(event: RunnerEvent, line: string): RunnerEvent {
  if (Buffer.byteLength(JSON.stringify(event)) <= MAX_EVENT_BYTES) return event;
  return {
    sourceSeq: event.sourceSeq,
    type: TEXT_EVENT,
    data: { delta: line.slice(0, 64 * 1024), truncated: true, length: line.length },
  };
}
