import { AguiEventType, type RunnerEvent } from "../../../../src/protocol/index.ts";

/** An event larger than this is cut down, so it always fits in a frame. */
const MAX_EVENT_BYTES = 800 * 1024;
const KEPT_LINE_CHARS = 64 * 1024;

const fits = (event: RunnerEvent) => Buffer.byteLength(JSON.stringify(event)) <= MAX_EVENT_BYTES;

/**
 * An event that fits in a frame, deterministically (the same line always gives the same event):
 * as it is; else without its `rawEvent` copy of the native message (`metadata.rawEventOmitted`);
 * else RAW with the line's first 64 KiB (`metadata: {truncated, length}`).
 */
export function fitEvent(event: RunnerEvent, line: string): RunnerEvent {
  if (fits(event)) return event;
  const data = event.data as Record<string, unknown> | undefined;
  if (data && "rawEvent" in data) {
    const { rawEvent: _omitted, ...rest } = data;
    const slim = { ...event, data: { ...rest, metadata: { ...(rest.metadata as object), rawEventOmitted: true } } };
    if (fits(slim)) return slim;
  }
  return {
    sourceSeq: event.sourceSeq,
    type: AguiEventType.RAW,
    data: {
      event: line.slice(0, KEPT_LINE_CHARS),
      source: "runner-bridge",
      metadata: { truncated: true, length: line.length },
    },
  };
}
