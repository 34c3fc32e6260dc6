import { type ServerToViewer, ServerToViewer as ServerToViewerSchema } from "../../src/protocol/index.ts";

/** What one viewer connection reports: frames, then exactly one `closed`. */
export type SocketNews = { kind: "frame"; frame: ServerToViewer; bytes: number } | { kind: "closed"; reason: string };

/** What the watch needs of a socket: the standard WebSocket's surface, and workerd's `accept()`. */
export interface ViewerSocket {
  close(code?: number): void;
  send(data: string): void;
  addEventListener(type: string, listener: (ev: never) => void): void;
  /** workerd's socket from an upgrade fetch: called once the watch listens to it. */
  accept?: () => void;
}
/** The standard constructor; Node's (undici) also takes `{headers}` as its second argument. */
export type WebSocketConstructor = new (url: string, init?: unknown) => unknown;
/**
 * Opens the viewer socket another way than `new WebSocket(url)`: given its http(s) URL and the
 * headers to send, answers the socket once the upgrade is done (socketOverFetch is one).
 */
export type SocketOpener = (url: string, headers: Record<string, string> | undefined) => Promise<ViewerSocket>;

/**
 * A SocketOpener for a Worker: an upgrade request through `fetch` (a service binding's, or the
 * global one), whose answer carries the socket (`response.webSocket`), as workerd does it.
 */
export function socketOverFetch(fetcher: (url: string, init: RequestInit) => Promise<Response>): SocketOpener {
  return async (url, headers) => {
    const response = await fetcher(url, { headers: { ...headers, upgrade: "websocket" } });
    const socket = (response as Response & { webSocket?: ViewerSocket | null }).webSocket;
    if (!socket) {
      await response.body?.cancel();
      throw new Error(`the upgrade was answered HTTP ${response.status} without a socket`);
    }
    return socket;
  };
}

/** How openViewer gets its socket: constructed (it reports `open`), or opened already by an opener. */
export type SocketDial =
  | { kind: "construct"; Ctor: WebSocketConstructor; url: string; headers: Record<string, string> | undefined }
  | { kind: "open"; opener: SocketOpener; url: string; headers: Record<string, string> | undefined };

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
export function openViewer(dial: SocketDial, openTimeoutMs: number): ViewerConnection {
  const queue: SocketNews[] = [];
  let waiting: ((news: SocketNews) => void) | null = null;
  let closed: SocketNews | null = null;
  let ws: ViewerSocket | null = null;
  const shut = () => {
    try {
      ws?.close(1000);
    } catch {
      // not open yet
    }
  };
  const push = (news: SocketNews) => {
    if (closed) return;
    if (news.kind === "closed") {
      closed = news;
      clearTimeout(openTimer);
      shut();
    }
    if (waiting) {
      const wake = waiting;
      waiting = null;
      wake(news);
    } else queue.push(news);
  };
  const openTimer = setTimeout(
    () => push({ kind: "closed", reason: `no answer within ${openTimeoutMs} ms` }),
    openTimeoutMs,
  );
  const listen = (socket: ViewerSocket) => {
    ws = socket;
    if (closed) {
      // Given up on before the opener answered: accepted only to be closed.
      try {
        socket.accept?.();
      } catch {
        // already accepted
      }
      return shut();
    }
    socket.addEventListener("open", () => clearTimeout(openTimer));
    socket.addEventListener("message", (ev: { data: unknown }) => {
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
    socket.addEventListener("close", (ev: { code: number; reason: string }) =>
      push({ kind: "closed", reason: `socket closed ${ev.code}${ev.reason ? ` ${ev.reason}` : ""}` }),
    );
    // Node's client reports a refused upgrade with an error and may never send a close.
    socket.addEventListener("error", () => push({ kind: "closed", reason: "socket error" }));
  };
  if (dial.kind === "construct") {
    const { Ctor, url, headers } = dial;
    listen((headers ? new Ctor(url, { headers }) : new Ctor(url)) as ViewerSocket);
  } else {
    dial.opener(dial.url, dial.headers).then(
      (socket) => {
        listen(socket);
        // An opened socket is past its upgrade: no `open` event comes. workerd's delivers nothing
        // until accepted, so it is accepted only now that every listener is on.
        clearTimeout(openTimer);
        if (!closed) socket.accept?.();
      },
      (err: unknown) =>
        push({
          kind: "closed",
          reason: `could not open the socket: ${err instanceof Error ? err.message : String(err)}`,
        }),
    );
  }
  return {
    next() {
      const head = queue.shift();
      if (head) return Promise.resolve(head);
      if (closed) return Promise.resolve(closed);
      return new Promise((resolve) => (waiting = resolve));
    },
    send(frame) {
      try {
        ws?.send(JSON.stringify(frame));
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
