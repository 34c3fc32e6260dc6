import { CLOSE_NORMAL, isTerminal, REPLAY_ACK_WAIT_MS, type RunStatus } from "../../protocol/index.ts";
import type { RunHost } from "../host.ts";
import { closeSocket, type SocketCredential, send, sendRaw } from "./run-sockets.ts";
import { handleSocketMessage } from "./socket-messages.ts";
import type { RunLog } from "../run-log.ts";

/** What a replay reads: the run's log, and its status as it is when asked. */
export interface ReplaySource {
  readonly log: RunLog;
  status(): RunStatus | undefined;
}

/** Events per replay frame, beside the byte bound (READ_PAGE_MAX_BYTES). */
const REPLAY_FRAME_EVENTS = 500;
const decoder = new TextDecoder();

/**
 * Attaches a viewer: every event after `after`, then the status, then (for a live run) the live
 * feed. The replay goes out in frames of at most READ_PAGE_MAX_BYTES, yielding after each such
 * amount so the runner and other viewers are served meanwhile; appends committed while it yields
 * reach it through the log, not live (RunSockets skips a replaying viewer). The switch to live
 * happens in the same turn as the read that reached the tail, so each event reaches the viewer
 * exactly once. At each yield it waits for the viewer's acks to bring its backlog under the bound;
 * one that does not ack within REPLAY_ACK_WAIT_MS is closed with CLOSE_RECONNECT.
 */
export async function attachViewer(
  host: RunHost,
  source: ReplaySource,
  ws: WebSocket,
  viewer: { after: number; interact: boolean; token: SocketCredential },
): Promise<void> {
  const { sockets, limits } = host;
  const initial = source.status();
  if (initial === undefined) throw new Error("run row missing");
  // A finished run sends nothing after its replay, so its socket is not handed to the hibernation
  // API: the runtime ends the connection of a hibernatable socket only when the object is
  // evicted (~10 s idle), well after the close handshake, and the viewer would wait that long.
  // Its frames (acks) come to listeners instead of the object's webSocketMessage.
  if (isTerminal(initial)) {
    sockets.acceptPlainViewer(ws);
    ws.addEventListener("message", (event) => void handleSocketMessage(host, ws, event.data));
    ws.addEventListener("close", () => sockets.forget(ws));
  } else sockets.acceptViewer(ws, viewer.interact, viewer.token);
  let from = source.log.position(viewer.after);
  sockets.flows.start(ws, from?.pos ?? source.log.logBytes());
  const ackWindow = Math.max(1, limits.viewerBacklogBytes - limits.pageBytes);
  let sinceYield = 0;
  while (from) {
    // Each page is the stored events' JSON joined by SQLite: the frame JSON.stringify would make.
    const page = source.log.readJoined(from, { maxBytes: limits.pageBytes, maxEntries: REPLAY_FRAME_EVENTS }, ",");
    if (page.count === 0) break;
    sockets.flows.sent(ws, page.next.pos);
    sendRaw(ws, `{"type":"events","events":[${decoder.decode(page.body)}]}`);
    from = page.upToDate ? null : page.next;
    if (!from) break;
    // After each page's worth of bytes (frames of small events are capped by count first), yield
    // to the object's other work, and wait for acks while the viewer is a full window behind.
    sinceYield += page.body.byteLength;
    if (sinceYield < limits.pageBytes) continue;
    sinceYield = 0;
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (!(await sockets.flows.below(ws, ackWindow, REPLAY_ACK_WAIT_MS))) {
      if (ws.readyState === WebSocket.OPEN) sockets.closeBehind(ws, "the replay was not acknowledged in time");
      return;
    }
    if (ws.readyState !== WebSocket.OPEN) return sockets.forget(ws);
  }
  // At the tail, in the same turn as the last read: live from here on.
  sockets.goLive(ws);
  const status = source.status() ?? initial;
  send(ws, { type: "status", status });
  if (isTerminal(status)) {
    send(ws, { type: "end", status });
    closeSocket(ws, CLOSE_NORMAL, "run ended");
    sockets.forget(ws);
  }
}
