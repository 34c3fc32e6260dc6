import { type OffsetRef, parseOffset } from "../log/offsets.ts";
import type { ReadResult } from "../log/reader.ts";
import { STREAM_HEADERS as H } from "../protocol/index.ts";
import { concat, isTextType } from "./content.ts";
import { responseCursor } from "./cursor.ts";
import { streamFailure, streamResponse } from "./http.ts";
import { SSE_LIFETIME_MS, SSE_WAIT_MS } from "./live-waits.ts";
import { readRefusal, type StreamReader } from "./stream-api.ts";

/** Server-Sent Events live reads (PROTOCOL §5.7): the read loop and its framing. */
const encoder = new TextEncoder();

/**
 * SSE: the worker loops over bounded reads of the log's object, each waiting at the tail, and
 * frames what comes back. Each data event is followed by a control event carrying the next offset.
 */
export async function serveSse(reader: StreamReader, offset: OffsetRef, cursor: string | undefined): Promise<Response> {
  const first = await reader.read({ offset, waitMs: 0 });
  if (first.kind !== "read") return streamFailure(readRefusal(first));
  const binary = !isTextType(first.info.contentType);
  const decoder = new TextDecoder();
  const startedAt = Date.now();
  let pending: ReadResult | null = first;
  let next = first.next;
  let cancelled = false;

  const frames = (result: Extract<ReadResult, { kind: "read" }>, announce: boolean): Uint8Array[] => {
    const out: Uint8Array[] = [];
    if (result.count > 0) out.push(dataEvent(binary ? base64(result.body) : decoder.decode(result.body)));
    if (result.count > 0 || announce || result.closedAtEnd) {
      if (result.closedAtEnd) out.push(controlEvent({ streamNextOffset: result.next, streamClosed: true }));
      else {
        const fields = { streamNextOffset: result.next, streamCursor: responseCursor(cursor) };
        out.push(controlEvent(result.upToDate ? { ...fields, upToDate: true } : fields));
      }
    }
    return out;
  };

  const body = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      const announce = pending === first;
      const result: ReadResult =
        pending ??
        (await reader.read({
          offset: parseOffset(next) ?? { kind: "start" },
          waitMs: Math.min(SSE_WAIT_MS, Math.max(0, startedAt + SSE_LIFETIME_MS - Date.now())),
        }));
      pending = null;
      if (cancelled) return;
      if (result.kind !== "read") {
        controller.close();
        return;
      }
      // A read that timed out with nothing new still tells the client it is caught up.
      // One chunk per batch: a data event and its control event reach the client together.
      const batch = frames(result, announce || result.count === 0);
      if (batch.length > 0) controller.enqueue(concat(batch));
      next = result.next;
      if (result.closedAtEnd || Date.now() - startedAt >= SSE_LIFETIME_MS) controller.close();
    },
    cancel: () => {
      cancelled = true;
    },
  });
  const headers: Record<string, string> = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  if (binary) headers[H.sseEncoding] = "base64";
  return streamResponse(200, headers, body);
}

/**
 * One `data` event. Every line of the payload gets its own `data:` prefix, splitting on CRLF,
 * LF and CR alike, so payload bytes can never end the event or start another one.
 */
function dataEvent(payload: string): Uint8Array {
  const lines = payload.split(/\r\n|\r|\n/);
  return encoder.encode(`event: data\n${lines.map((line) => `data:${line}`).join("\n")}\n\n`);
}

interface ControlFields {
  streamNextOffset: string;
  streamCursor?: string;
  upToDate?: true;
  streamClosed?: true;
}

function controlEvent(fields: ControlFields): Uint8Array {
  return encoder.encode(`event: control\ndata:${JSON.stringify(fields)}\n\n`);
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  const CHUNK = 0x8000;
  for (let at = 0; at < bytes.byteLength; at += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(at, at + CHUNK));
  }
  return btoa(binary);
}
