/** A JSON WebSocket whose frames queue up, read one at a time with bounded, named waits. */
import { waitFor } from "../support/wait.ts";
import { bearerSocket } from "../support/bearer-socket.ts";

export type Frame = Record<string, unknown> & { type: string };

export interface JsonSocket {
  send(frame: Record<string, unknown>): void;
  /** The next frame, which must have this type. */
  next(type: string, timeoutMs?: number): Promise<Frame>;
  /** Every frame up to and including the first of `type`. */
  until(type: string, timeoutMs?: number): Promise<Frame[]>;
  closed(): { code: number; reason: string } | null;
  close(): void;
}

/** Opens `url`; `credential` (an API key or runner token) goes in the Authorization header. */
export async function openJsonSocket(url: string, name: string, credential?: string): Promise<JsonSocket> {
  const ws = credential === undefined ? new WebSocket(url) : bearerSocket(url, credential);
  const queue: Frame[] = [];
  let closed: { code: number; reason: string } | null = null;
  ws.addEventListener("message", (event) => queue.push(JSON.parse(String(event.data)) as Frame));
  ws.addEventListener("close", (event) => (closed = { code: event.code, reason: event.reason }));
  let opened = false;
  let failed = false;
  ws.addEventListener("open", () => (opened = true));
  ws.addEventListener("error", () => (failed = true));
  // A server may send everything and close at once (a replay of a finished run): opened is enough.
  await waitFor(`${name} socket to open`, () => opened || failed || closed !== null);
  if (!opened) throw new Error(`${name} socket ${url} failed to open (${JSON.stringify(closed)})`);
  const take = async (type: string, timeoutMs: number): Promise<Frame> => {
    const frame = await waitFor(
      `a ${type} frame on the ${name} socket`,
      () => queue.shift() ?? (closed ? { type: "(closed)", ...closed } : undefined),
      timeoutMs,
      10,
    );
    if (frame.type !== type) throw new Error(`${name} socket: expected a ${type} frame, got ${JSON.stringify(frame)}`);
    return frame;
  };
  return {
    send: (frame) => ws.send(JSON.stringify(frame)),
    next: (type, timeoutMs = 10_000) => take(type, timeoutMs),
    async until(type, timeoutMs = 10_000) {
      const frames: Frame[] = [];
      for (;;) {
        const frame = await waitFor(
          `a ${type} frame on the ${name} socket (after ${frames.length} others)`,
          () => queue.shift() ?? (closed ? { type: "(closed)", ...closed } : undefined),
          timeoutMs,
          10,
        );
        if (frame.type === "(closed)")
          throw new Error(`${name} socket closed before a ${type} frame: ${JSON.stringify(frame)}`);
        frames.push(frame);
        if (frame.type === type) return frames;
      }
    },
    closed: () => closed,
    close: () => ws.close(),
  };
}
