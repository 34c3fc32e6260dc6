import { encodeOffset, type OffsetRef } from "../log/offsets.ts";
import type { ReadResult, StreamInfo } from "../log/reader.ts";
import { RunLog } from "./run-log.ts";
import { readRun } from "./store.ts";

/**
 * The run's log read as a Durable Streams JSON-mode stream: one message per event (its stored
 * JSON, byte for byte what viewers get), closed once the run is terminal.
 */
export function readRunLog(sql: SqlStorage, offset: OffsetRef, maxBytes: number): ReadResult {
  const log = new RunLog(sql);
  const run = readRun(sql, log);
  if (!run || run.purgedAt !== null) return { kind: "not_found" };
  const page = log.readStreamPage(offset, maxBytes);
  if (page.kind !== "read") return page;
  return { ...page, info: streamInfo(run.runId, run.createdAt, log) };
}

export function runStreamInfo(sql: SqlStorage): StreamInfo | null {
  const log = new RunLog(sql);
  const run = readRun(sql, log);
  return run && run.purgedAt === null ? streamInfo(run.runId, run.createdAt, log) : null;
}

function streamInfo(runId: string, createdAt: number, log: RunLog): StreamInfo {
  const state = log.state();
  return {
    // A run id is never reused (a purged id stays a tombstone), so it names the stream for good.
    streamId: `${runId}.${createdAt}`,
    contentType: "application/json",
    tail: encodeOffset(state.tail),
    closed: state.closed,
    ttlSeconds: null,
    expiresAt: null,
  };
}
