/**
 * How far each viewer is behind: event bytes (log positions) sent to it past the last position it
 * acknowledged with an `ack` frame. The runtime does not report how much of a socket's output is
 * still unsent, so a viewer's own acks are the measure: one that stops reading (or never acks)
 * stops being sent to once this passes the bound, instead of the object queueing the whole log
 * for it in memory. Kept in memory only: an object that wakes from hibernation had nothing queued.
 */
interface Flow {
  sent: number;
  acked: number;
  wake: (() => void) | null;
}

export class ViewerFlows {
  private readonly flows = new Map<WebSocket, Flow>();
  readonly maxBacklog: number;

  constructor(maxBacklog: number) {
    this.maxBacklog = maxBacklog;
  }

  /** The viewer's flow, counted from `pos` when it has none yet. */
  private of(ws: WebSocket, pos: number): Flow {
    let flow = this.flows.get(ws);
    if (!flow) {
      flow = { sent: pos, acked: pos, wake: null };
      this.flows.set(ws, flow);
    }
    return flow;
  }

  /** Starts counting at `pos` (where a replay begins). */
  start(ws: WebSocket, pos: number): void {
    this.flows.set(ws, { sent: pos, acked: pos, wake: null });
  }

  /**
   * Whether sending the viewer everything up to `pos` keeps it within the bound; if so, it is
   * recorded as sent. `from`: where counting starts for a viewer not yet counted.
   */
  trySend(ws: WebSocket, from: number, pos: number): boolean {
    const flow = this.of(ws, from);
    if (pos - flow.acked > this.maxBacklog) return false;
    flow.sent = Math.max(flow.sent, pos);
    return true;
  }

  /** Records sending up to `pos`, whatever the backlog (a replay frame, sent once it was under a window). */
  sent(ws: WebSocket, pos: number): void {
    const flow = this.of(ws, pos);
    flow.sent = Math.max(flow.sent, pos);
  }

  /** The viewer has everything up to `pos` (never past what it was sent). */
  ack(ws: WebSocket, pos: number): void {
    const flow = this.flows.get(ws);
    if (!flow) return;
    flow.acked = Math.max(flow.acked, Math.min(pos, flow.sent));
    flow.wake?.();
  }

  /** What was sent and not acknowledged. */
  backlog(ws: WebSocket): number {
    const flow = this.flows.get(ws);
    return flow ? flow.sent - flow.acked : 0;
  }

  /** Resolves true once the backlog is under `bytes`, false if `timeoutMs` passes first. */
  async below(ws: WebSocket, bytes: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const flow = this.flows.get(ws);
      if (!flow) return false;
      if (flow.sent - flow.acked < bytes) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      // An in-memory wait tied to this connection (nothing durable waits on it).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        flow.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      flow.wake = null;
    }
  }

  forget(ws: WebSocket): void {
    this.flows.get(ws)?.wake?.();
    this.flows.delete(ws);
  }
}
