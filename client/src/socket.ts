import { type ServerToViewer, ServerToViewer as ServerToViewerSchema } from "../../src/protocol/index.ts";

/** What one viewer connection reports: frames, then exactly one `closed`. */
export type SocketNews = { kind: "frame"; frame: ServerToViewer; bytes: number } | { kind: "closed"; reason: string };

interface MinimalSocket {
  close(code?: number): void;
  send(data: string): void;
  addEventListener(type: string, listener: (ev: never) => void): void;
}
/** The standard constructor; Node's (undici) also takes `{headers}` as its second argument. */
export type WebSocketConstructor = new (url: string, init?: unknown) => unknown;

export interface ViewerConnection {
  /** The next frame, or `closed` (then every later call answers `closed` too). */
  next(): Promise<SocketNews>;
  send(frame: unknown): void;
  close(reason: string): void;
}

/**
 * Opens the viewer socket and turns its callbacks into a queue the watch reads at its own pace.
 * A frame that does not parse is dropped: the protocol lets the edge add frame types.
 */
export function openViewer(
  Ctor: WebSocketConstructor,
  url: string,
  headers: Record<string, string> | undefined,
  openTimeoutMs: number,
): ViewerConnection {
  const queue: SocketNews[] = [];
  let waiting: ((news: SocketNews) => void) | null = null;
  let closed: SocketNews | null = null;
  const push = (news: SocketNews) => {
    if (closed) return;
    if (news.kind === "closed") {
      closed = news;
      clearTimeout(openTimer);
      try {
        ws.close(1000);
      } catch {
        // not open yet
      }
    }
    if (waiting) {
      const wake = waiting;
      waiting = null;
      wake(news);
    } else queue.push(news);
  };
  const ws = (headers ? new Ctor(url, { headers }) : new Ctor(url)) as MinimalSocket;
  const openTimer = setTimeout(
    () => push({ kind: "closed", reason: `no answer within ${openTimeoutMs} ms` }),
    openTimeoutMs,
  );
  ws.addEventListener("open", () => clearTimeout(openTimer));
  ws.addEventListener("message", (ev: { data: unknown }) => {
    const text = frameText(ev.data);
    if (text === null) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    const parsed = ServerToViewerSchema.safeParse(value);
    if (parsed.success) push({ kind: "frame", frame: parsed.data, bytes: text.length });
  });
  ws.addEventListener("close", (ev: { code: number; reason: string }) =>
    push({ kind: "closed", reason: `socket closed ${ev.code}${ev.reason ? ` ${ev.reason}` : ""}` }),
  );
  // Node's client reports a refused upgrade with an error and may never send a close.
  ws.addEventListener("error", () => push({ kind: "closed", reason: "socket error" }));
  return {
    next() {
      const head = queue.shift();
      if (head) return Promise.resolve(head);
      if (closed) return Promise.resolve(closed);
      return new Promise((resolve) => (waiting = resolve));
    },
    send(frame) {
      try {
        ws.send(JSON.stringify(frame));
      } catch {
        // closing: the close reports it
      }
    },
    close: (reason) => push({ kind: "closed", reason }),
  };
}

function frameText(data: unknown): string | null {
  if (typeof data === "string") return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data);
  if (ArrayBuffer.isView(data)) return new TextDecoder().decode(data);
  return null;
}
