import { normalizeEdge } from "../edge.ts";
import { openBearerSocket } from "../socket.ts";

/** The pool socket, reduced to what the host needs (Node's global WebSocket client, with headers). */
export interface PoolSocket {
  send(text: string): void;
  close(): void;
}

export interface PoolSocketHandlers {
  onOpen(): void;
  onMessage(text: string): void;
  onClose(code: number, reason: string): void;
}

export function poolConnectUrl(edge: string, queue: string, scheme: "ws" | "http" = "ws"): string {
  const url = new URL(`${normalizeEdge(edge)}/v1/pools/connect`);
  if (scheme === "ws") url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("queue", queue);
  return url.toString();
}

/** Dials the pool socket with the key in the Authorization header, never in the URL. */
export function connectPoolSocket(edge: string, queue: string, key: string, handlers: PoolSocketHandlers): PoolSocket {
  const ws = openBearerSocket(poolConnectUrl(edge, queue), key);
  let closed = false;
  let opened = false;
  const closeOnce = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    handlers.onClose(code, reason);
  };
  ws.addEventListener("open", () => {
    opened = true;
    handlers.onOpen();
  });
  ws.addEventListener("message", (ev) => {
    if (typeof ev.data === "string") handlers.onMessage(ev.data);
    else if (ev.data instanceof ArrayBuffer) handlers.onMessage(Buffer.from(ev.data).toString("utf8"));
  });
  ws.addEventListener("close", (ev) => closeOnce(ev.code, ev.reason));
  // A failed attempt is reported by `error` alone; on an open socket a close event follows.
  ws.addEventListener("error", () => !opened && closeOnce(1006, "connection failed"));
  return {
    send: (text) => {
      try {
        ws.send(text);
      } catch {
        // closing: the close event reports it, and what was unsent is sent again after hello
      }
    },
    close: () => {
      try {
        ws.close(1000);
      } catch {
        // still connecting
      }
      setTimeout(() => closeOnce(1006, "closed locally"), 2000).unref();
    },
  };
}

/**
 * Why the edge refuses this key, when it does: one plain GET of the connect URL (no upgrade).
 * Null when it does not refuse it (or cannot be reached), so the caller keeps dialling.
 */
export async function keyRefusal(edge: string, queue: string, key: string): Promise<string | null> {
  try {
    const res = await fetch(poolConnectUrl(edge, queue, "http"), {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(5000),
    });
    const body = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
    if (res.status !== 401 && res.status !== 403) return null;
    return `the edge refused the pool key (${res.status}${body.error?.message ? `: ${body.error.message}` : ""})`;
  } catch {
    return null;
  }
}
