import { CLOSE_NORMAL, isTerminal, type RunEvent } from "../protocol/index.ts";
import { closeSocket, type RunSockets, send } from "./run-sockets.ts";
import type { RunStore } from "./store.ts";

const REPLAY_PAGE = 500;

/**
 * Attaches a viewer: every event after `after`, then the status, then (for a live run) the live
 * feed. This runs without yielding, so no append can land between the replay and the switch to
 * live: each event reaches the viewer exactly once.
 */
export function attachViewer(
  sockets: RunSockets,
  store: RunStore,
  ws: WebSocket,
  viewer: { after: number; interact: boolean },
): void {
  const status = store.load()?.status;
  if (status === undefined) throw new Error("run row missing");
  const finished = isTerminal(status);
  // A finished run sends nothing after its replay, so its socket is not handed to the hibernation
  // API: the runtime ends the connection of a hibernatable socket only when the object is
  // evicted (~10 s idle), well after the close handshake, and the viewer would wait that long.
  if (finished) ws.accept();
  else sockets.acceptViewer(ws, viewer.interact);
  let cursor = viewer.after;
  for (;;) {
    const events = store.eventsAfter(cursor, REPLAY_PAGE);
    if (events.length === 0) break;
    send(ws, { type: "events", events });
    cursor = (events[events.length - 1] as RunEvent).seq;
    if (events.length < REPLAY_PAGE) break;
  }
  send(ws, { type: "status", status });
  if (finished) {
    send(ws, { type: "end", status });
    closeSocket(ws, CLOSE_NORMAL, "run ended");
  }
}
