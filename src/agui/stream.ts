import { type OffsetRef, parseOffset } from "../log/offsets.ts";
import type { ReadRequest, ReadResult } from "../log/reader.ts";
import type { EventsPage, Result, RunEvent } from "../protocol/index.ts";
import { encodeStarted, HEARTBEAT } from "./events.ts";
import { ResumeEncoder } from "./reopen.ts";

/**
 * The body of an AG-UI stream: the replay after the client's seq, a page at a time from the
 * event log, then live reads of the run's log inside its object (the same waits the run's
 * Durable Streams SSE uses: no polling), until the run is terminal or the lifetime runs out.
 */

/** What the stream reads a run through: its object's event pages and its log reads. */
export interface AguiSource {
  page(after: number): Promise<Result<EventsPage>>;
  read(request: ReadRequest): Promise<ReadResult>;
}

export interface AguiBounds {
  /** Idle this long, a heartbeat comment is sent. */
  heartbeatMs: number;
  /** The response ends this long after it started, terminal or not; the client resumes from its last id. */
  lifetimeMs: number;
}

export interface AguiStart {
  runId: string;
  /** The last seq the client has: the stream carries seq > after. */
  after: number;
  /** The log's tail when the request was checked: the replay reaches it, live reads go on from it. */
  tail: { seq: number; offset: OffsetRef };
}

export function aguiStream(source: AguiSource, start: AguiStart, bounds: AguiBounds): ReadableStream<Uint8Array> {
  const chunks = aguiChunks(source, start, bounds, Date.now() + bounds.lifetimeMs);
  return new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: async () => {
      await chunks.return(undefined);
    },
  });
}

async function* aguiChunks(
  source: AguiSource,
  start: AguiStart,
  bounds: AguiBounds,
  endsAt: number,
): AsyncGenerator<Uint8Array, void, undefined> {
  const { runId } = start;
  let last = start.after;
  const fresh = (events: readonly RunEvent[]) => {
    const out = events.filter((event) => event.seq > last);
    const newest = out.at(-1);
    if (newest) last = newest.seq;
    return out;
  };
  // A response resumed inside an open message sends its START again first (reopen.ts).
  const frames = new ResumeEncoder(runId, start.after, (after) => source.page(after));
  yield encodeStarted(runId);

  while (last < start.tail.seq) {
    const page = await source.page(last);
    if (!page.ok) return; // purged meanwhile: the stream just ends
    const events = fresh(page.value.events);
    if (events.length === 0) break;
    yield await frames.encode(events);
  }

  let offset = start.tail.offset;
  for (;;) {
    const remaining = endsAt - Date.now();
    if (remaining <= 0) return;
    const result = await source.read({ offset, waitMs: Math.min(bounds.heartbeatMs, remaining) });
    if (result.kind !== "read") return;
    const events = fresh(JSON.parse(new TextDecoder().decode(result.body)) as RunEvent[]);
    if (events.length > 0) yield await frames.encode(events);
    else if (!result.closedAtEnd) yield HEARTBEAT;
    if (result.closedAtEnd) return;
    offset = nextOffset(result.next);
  }
}

function nextOffset(token: string): OffsetRef {
  const offset = parseOffset(token);
  if (!offset) throw new Error(`a log read answered an offset that is not a token: ${token}`);
  return offset;
}
