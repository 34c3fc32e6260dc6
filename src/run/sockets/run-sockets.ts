import type { LogPosition } from "../../log/offsets.ts";
import {
  type Failure,
  CLOSE_CREDENTIAL,
  CLOSE_FENCED,
  CLOSE_NORMAL,
  CLOSE_RECONNECT,
  CLOSE_REJECTED,
  isTerminal,
  type RunStatus,
  type ServerToRunner,
  type ServerToViewer,
} from "../../protocol/index.ts";
import type { Effects } from "../effects.ts";
import { type SocketAttachment, SocketAttachments } from "./attachment.ts";
import { eventJson } from "../store.ts";
import { ViewerFlows } from "../viewer-flow.ts";

import type { PresentedToken } from "../token-store.ts";

/** A socket's token as it opened: a PresentedToken, or null for an API key. */
export type SocketCredential = PresentedToken | null;

export function send(ws: WebSocket, frame: ServerToRunner | ServerToViewer): void {
  sendRaw(ws, JSON.stringify(frame));
}

/** A refused frame's answer: an error frame naming the Failure's code. */
export function sendFailure(ws: WebSocket, failure: Failure): void {
  send(ws, { type: "error", code: failure.code, message: failure.message });
}

/** Sends a frame already serialised. */
export function sendRaw(ws: WebSocket, frame: string): void {
  try {
    ws.send(frame);
  } catch {
    // The peer is gone; its close handler cleans up.
  }
}

export function closeSocket(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}

/**
 * The live sockets of one run, accepted through the hibernation API and grouped by role with its
 * tags, and the delivery of what each committed operation produced to them. A viewer still being
 * replayed to (viewer-replay.ts) gets no live frames: its replay reads them from the log.
 */
export class RunSockets {
  private readonly ctx: DurableObjectState;
  readonly flows: ViewerFlows;
  /** Hibernatable viewers whose replay has not reached the tail yet. */
  private readonly replaying = new Set<WebSocket>();
  /** Viewers of a finished run, replayed to without the hibernation API (see viewer-replay.ts). */
  private readonly plainViewers = new Set<WebSocket>();

  private readonly attachments = new SocketAttachments();

  constructor(ctx: DurableObjectState, maxViewerBacklog: number) {
    this.ctx = ctx;
    this.flows = new ViewerFlows(maxViewerBacklog);
  }

  /** What the socket remembers across hibernation: its role, claim and token. */
  attachmentOf(ws: WebSocket): Readonly<SocketAttachment> | null {
    return this.attachments.of(ws);
  }

  /** A runner socket; it holds no claim until its `hello`. */
  acceptRunner(ws: WebSocket, token: SocketCredential): void {
    this.ctx.acceptWebSocket(ws, ["runner"]);
    this.attachments.set(ws, { role: "runner", epoch: 0, generation: 1, token });
  }

  /** Records the epoch a runner socket's `hello` claimed, and the generation it serves. */
  setRunnerClaim(ws: WebSocket, epoch: number, generation: number): void {
    const before = this.attachmentOf(ws);
    const token = before?.role === "runner" ? before.token : undefined;
    this.attachments.set(ws, { role: "runner", epoch, generation, ...(token === undefined ? {} : { token }) });
  }

  /** A viewer of a run still going: it replays first, and takes live frames once `goLive`. */
  acceptViewer(ws: WebSocket, interact: boolean, token: SocketCredential): void {
    this.ctx.acceptWebSocket(ws, ["viewer"]);
    this.attachments.set(ws, { role: "viewer", interact, token });
    this.replaying.add(ws);
  }

  /** A viewer of a finished run: replayed to and closed, never hibernated. */
  acceptPlainViewer(ws: WebSocket): void {
    ws.accept();
    this.plainViewers.add(ws);
  }

  /** The viewer's replay reached the tail: from now on it gets every committed event live. */
  goLive(ws: WebSocket): void {
    this.replaying.delete(ws);
  }

  /** Viewer sockets open on the run, replaying or live. */
  viewerCount(): number {
    return this.viewers().length + this.plainViewers.size;
  }

  /** A socket closed: drop what was kept for it. */
  forget(ws: WebSocket): void {
    this.replaying.delete(ws);
    this.plainViewers.delete(ws);
    this.flows.forget(ws);
  }

  /**
   * Closes a viewer that fell behind: it reconnects from the last seq it holds. The error frame
   * says so first, since a hibernatable socket's close can reach a real client seconds late.
   */
  closeBehind(ws: WebSocket, why: string): void {
    this.forget(ws);
    const message = `${why}; reconnect from your last seq`;
    send(ws, { type: "error", code: "viewer_behind", message });
    closeSocket(ws, CLOSE_RECONNECT, message.slice(0, 120));
  }

  /**
   * Closes, at once, every socket whose token `revoked` names (a token id, or every token). API-key
   * sockets stay; sockets from before tokens had ids carry no record of theirs and close with all.
   */
  closeRevoked(revoked: { tokenId: string } | "all"): void {
    for (const ws of this.ctx.getWebSockets()) {
      const token = this.attachmentOf(ws)?.token;
      const matches =
        revoked === "all" ? token !== null : token !== undefined && token !== null && token.tokenId === revoked.tokenId;
      if (!matches) continue;
      sendFailure(ws, { ok: false, code: "token_revoked", message: "this socket's token was revoked" });
      closeSocket(ws, CLOSE_CREDENTIAL, "token revoked");
    }
  }

  runners(): WebSocket[] {
    return this.ctx.getWebSockets("runner");
  }

  viewers(): WebSocket[] {
    return this.ctx.getWebSockets("viewer");
  }

  /** Hibernatable viewers past their replay: those that take live frames. */
  private liveViewers(): WebSocket[] {
    const viewers = this.viewers();
    return this.replaying.size === 0 ? viewers : viewers.filter((ws) => !this.replaying.has(ws));
  }

  /** The runner socket holding the current claim, if it is connected. */
  currentRunner(epoch: number): WebSocket | null {
    if (epoch === 0) return null;
    return (
      this.runners().find((ws) => {
        const attachment = this.attachmentOf(ws);
        return attachment?.role === "runner" && attachment.epoch === epoch && ws.readyState === WebSocket.OPEN;
      }) ?? null
    );
  }

  fenceAllBut(keep: WebSocket, epoch: number): void {
    for (const ws of this.runners()) {
      if (ws === keep) continue;
      send(ws, { type: "fenced", epoch });
      closeSocket(ws, CLOSE_FENCED, "fenced by a newer claim");
    }
  }

  /**
   * Delivers what a committed operation produced, in the order viewers must see it. `tail`: the
   * log's tail after it, where each live viewer's backlog now ends.
   */
  deliver(effects: Effects, epoch: number, status: RunStatus, tail: LogPosition): void {
    // Most operations (heartbeats, acks, claims) reach no viewer: list the sockets only when one does.
    const viewers = effects.appended.length > 0 || effects.statusChanged ? this.liveViewers() : [];
    if (effects.appended.length > 0) {
      // JSON.stringify of the frame, from each event's JSON as it was stored.
      const frame = `{"type":"events","events":[${effects.appended.map(eventJson).join(",")}]}`;
      // One pass per event, per viewer: bound check, send, and keep it for the status frames below.
      let kept = 0;
      for (const ws of viewers) {
        // A viewer first counted now (the object woke from hibernation) starts at this tail.
        if (!this.flows.trySend(ws, tail.pos, tail.pos)) {
          this.closeBehind(ws, `over ${this.flows.maxBacklog} bytes sent past your last ack`);
          continue;
        }
        sendRaw(ws, frame);
        viewers[kept++] = ws;
      }
      viewers.length = kept;
    }
    const runner = this.currentRunner(epoch);
    if (runner) for (const frame of effects.runnerFrames) send(runner, frame);
    if (effects.endRunner) {
      for (const ws of this.runners()) {
        send(ws, effects.endRunner);
        closeSocket(ws, CLOSE_REJECTED, "run ended");
      }
    }
    if (effects.statusChanged) {
      for (const ws of viewers) send(ws, { type: "status", status });
      if (isTerminal(status)) {
        for (const ws of viewers) {
          send(ws, { type: "end", status });
          closeSocket(ws, CLOSE_NORMAL, "run ended");
        }
      }
    }
  }
}
