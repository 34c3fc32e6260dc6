import { runnerSocketUrl } from "./edge.ts";

/** The runner WebSocket, reduced to what the session needs (Node's global WebSocket client). */
export interface Socket {
  send(text: string): void;
  close(): void;
  isOpen(): boolean;
  bufferedAmount(): number;
}

export interface SocketHandlers {
  onOpen(): void;
  onMessage(text: string): void;
  onClose(code: number, reason: string): void;
}

export interface NodeWebSocket {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open", listener: () => void): void;
  addEventListener(type: "message", listener: (ev: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (ev: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: (ev: unknown) => void): void;
}
type NodeWebSocketCtor = new (url: string, init: { headers: Record<string, string> }) => NodeWebSocket;

const OPEN = 1;

/**
 * Node's global WebSocket client dialling `url` with a bearer credential. The credential goes in a
 * header (Node's client can set one), never in the URL, where proxies and access logs would keep it.
 */
export function openBearerSocket(url: string, credential: string): NodeWebSocket {
  const Ctor = (globalThis as unknown as { WebSocket?: NodeWebSocketCtor }).WebSocket;
  if (!Ctor) throw new Error("this Node has no global WebSocket (need Node >= 22)");
  return new Ctor(url, { headers: { authorization: `Bearer ${credential}` } });
}

export function connectSocket(edge: string, runId: string, token: string, handlers: SocketHandlers): Socket {
  const ws = openBearerSocket(runnerSocketUrl(edge, runId), token);
  let closed = false;
  const closeOnce = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    handlers.onClose(code, reason);
  };
  let opened = false;
  ws.addEventListener("open", () => {
    opened = true;
    handlers.onOpen();
  });
  ws.addEventListener("message", (ev) => {
    const data = ev.data;
    if (typeof data === "string") handlers.onMessage(data);
    else if (data instanceof ArrayBuffer) handlers.onMessage(Buffer.from(data).toString("utf8"));
  });
  ws.addEventListener("close", (ev) => closeOnce(ev.code, ev.reason));
  ws.addEventListener("error", () => {
    // Node 22's client reports a failed connection attempt with `error` alone, never `close`;
    // on an open socket a close event follows with the real code.
    if (!opened) closeOnce(1006, "connection failed");
  });
  return {
    send: (text) => ws.send(text),
    close: () => {
      try {
        ws.close(1000);
      } catch {
        // still connecting: the close event reports it
      }
      // Node's client may not report a close for a socket that never opened in time.
      setTimeout(() => closeOnce(1006, "closed locally"), 2000).unref();
    },
    isOpen: () => ws.readyState === OPEN,
    bufferedAmount: () => ws.bufferedAmount,
  };
}
