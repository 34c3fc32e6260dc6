import fc from "fast-check";
import { MAX_BATCH_EVENTS, MAX_FRAME_BYTES } from "../../../src/protocol/index.ts";
import type { SocketProbe } from "../../edge/sockets.ts";
import { anyJson, deepText, nastyString, notJsonText } from "./nasty.ts";
import { checkError, type FuzzTally } from "./oracle.ts";

type Frame = { type: string; [key: string]: any };

/** A fuzzed socket message: JSON text with placeholders, or raw bytes, or a marker for a big one. */
export type Message =
  | { kind: "text"; text: string }
  | { kind: "binary"; bytes: Uint8Array }
  | { kind: "binary text"; text: string }
  | { kind: "oversize" }
  | { kind: "batch over the limit" };

/** Messages of every kind, `shaped` ones (frames of the socket's own types, broken) the most. */
export function messages(shaped: fc.Arbitrary<unknown>): fc.Arbitrary<Message> {
  const text = (arb: fc.Arbitrary<string>) => arb.map((t) => ({ kind: "text" as const, text: t }));
  return fc.oneof(
    { weight: 12, arbitrary: text(shaped.map((o) => JSON.stringify(o))) },
    { weight: 2, arbitrary: text(notJsonText) },
    { weight: 2, arbitrary: text(anyJson.map((v) => JSON.stringify(v) ?? "null")) },
    { weight: 1, arbitrary: text(deepText) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: "binary" as const, bytes })) },
    { weight: 1, arbitrary: shaped.map((o) => ({ kind: "binary text" as const, text: JSON.stringify(o) })) },
    { weight: 1, arbitrary: fc.constantFrom({ kind: "oversize" as const }, { kind: "batch over the limit" as const }) },
  );
}

/** The message as sent: placeholders (`"{epoch}"` and the like, quotes included) filled in. */
export function render(message: Message, values: Record<string, number | string>, epoch: number): string | ArrayBuffer {
  const fill = (text: string) =>
    Object.entries(values).reduce((t, [name, value]) => t.replaceAll(`"{${name}}"`, JSON.stringify(value)), text);
  switch (message.kind) {
    case "text":
      return fill(message.text);
    case "binary":
      return new Uint8Array(message.bytes).buffer as ArrayBuffer;
    case "binary text":
      return new TextEncoder().encode(fill(message.text)).buffer as ArrayBuffer;
    case "oversize":
      return JSON.stringify({
        type: "events",
        epoch,
        events: [{ sourceSeq: 1, type: "T", data: "x".repeat(MAX_FRAME_BYTES) }],
      });
    case "batch over the limit": {
      const events = Array.from({ length: MAX_BATCH_EVENTS + 1 }, (_, i) => ({ sourceSeq: i + 1, type: "T" }));
      return JSON.stringify({ type: "events", epoch, events });
    }
  }
}

export function describeMessage(message: Message): string {
  if (message.kind === "text" || message.kind === "binary text")
    return `${message.kind}: ${message.text.slice(0, 300)}`;
  if (message.kind === "binary") return `binary: ${message.bytes.length} bytes`;
  return message.kind;
}

let settles = 0;
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

/** A frame each socket refuses for its unknown key, which the refusal names. */
export const MARKERS = {
  runner: (key: string) => `{"type":"heartbeat","epoch":1,"${key}":true}`,
  viewer: (key: string) => `{"type":"command","command":{"commandId":"m","type":"interrupt"},"${key}":true}`,
};

/**
 * Every frame the socket got in answer to what was sent before: a marker frame goes out last, and
 * its own refusal (which names the marker) closes the list. A socket the edge closed instead
 * (fenced, run over) answers with what it sent before closing. Error frames are checked as they
 * come: a documented code, never `internal`.
 */
export async function answers(
  probe: SocketProbe,
  markerFrame: (key: string) => string,
  tally: FuzzTally,
  what: string,
): Promise<Frame[]> {
  const marker = `settle_${++settles}`;
  if (!probe.closed) probe.send(markerFrame(marker));
  for (let waited = 0; ; waited++) {
    const at = probe.frames.findIndex((f) => f.type === "error" && String(f.message).includes(marker));
    if (at >= 0 || probe.closed) {
      const got = probe.frames.splice(0, at >= 0 ? at + 1 : probe.frames.length);
      if (at >= 0) got.pop();
      for (const frame of got.filter((f) => f.type === "error")) {
        if (frame.code === "internal") {
          tally.internalFrames++;
          throw new Error(`${what}: answered error internal: ${frame.message}`);
        }
        checkError(frame, what);
      }
      return got;
    }
    if (waited > 5_000)
      throw new Error(`${what}: no answer (frames so far ${JSON.stringify(probe.frames).slice(0, 300)})`);
    await tick();
  }
}

/** Text for fields that want a short id: mostly plausible, sometimes hostile. */
export const idText = fc.oneof({ weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) }, nastyString);
