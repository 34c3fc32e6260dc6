import { CLOSE_NORMAL, isTerminal } from "../protocol/index.ts";
import { closeSocket, type RunSockets, type SocketCredential, send, sendRaw } from "./run-sockets.ts";
import type { RunStore } from "./store.ts";

const REPLAY_PAGE = { maxBytes: Number.MAX_SAFE_INTEGER, maxEntries: 500 };
const decoder = new TextDecoder();

/**
 * Attaches a viewer: every event after `after`, then the status, then (for a live run) the live
 * feed. This runs without yielding, so no append can land between the replay and the switch to
 * live: each event reaches the viewer exactly once.
 */
export function attachViewer(
  sockets: RunSockets,
  store: RunStore,
  ws: WebSocket,
  viewer: { after: number; interact: boolean; token: SocketCredential },
): void {
  const status = store.load()?.status;
  if (status === undefined) throw new Error("run row missing");
  const finished = isTerminal(status);
  // A finished run sends nothing after its replay, so its socket is not handed to the hibernation
  // API: the runtime ends the connection of a hibernatable socket only when the object is
  // evicted (~10 s idle), well after the close handshake, and the viewer would wait that long.
  if (finished) ws.accept();
  else sockets.acceptViewer(ws, viewer.interact, viewer.token);
  // Each page is the stored events' JSON joined by SQLite: the frame JSON.stringify would make.
  let from = store.log.position(viewer.after);
  while (from) {
    const page = store.log.readJoined(from, REPLAY_PAGE, ",");
    if (page.count === 0) break;
    sendRaw(ws, `{"type":"events","events":[${decoder.decode(page.body)}]}`);
    from = page.count < REPLAY_PAGE.maxEntries ? null : page.next;
  }
  send(ws, { type: "status", status });
  if (finished) {
    send(ws, { type: "end", status });
    closeSocket(ws, CLOSE_NORMAL, "run ended");
  }
}
