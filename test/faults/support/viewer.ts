import type { RunEvent } from "../../../src/protocol/index.ts";
import { waitFor } from "../../support/wait.ts";

export interface ViewerOptions {
  base: string;
  runId: string;
  token: string;
  name: string;
}

/**
 * A viewer over a real WebSocket that keeps watching through any fault: whenever its socket ends
 * before `end`, it reconnects from the last seq it has (`watch?after=<lastSeq>`). It keeps every
 * event exactly as received, so a duplicate or a gap shows when the list is compared with the
 * stored log. `end` is final: the viewer closes the socket itself rather than wait for the edge's
 * close (a live run's viewer socket is hibernatable and its close can lag in `wrangler dev`).
 */
export class ReconnectingViewer {
  readonly name: string;
  /** Every event in the order received, duplicates included. */
  readonly received: RunEvent[] = [];
  /** Error frames, and events that did not continue the sequence (duplicates, gaps). */
  readonly anomalies: string[] = [];
  /** How many sockets it opened. */
  connections = 0;
  ended: string | null = null;
  private readonly url: string;
  private socket: WebSocket | null = null;
  private stopped = false;
  /** Attempts in a row that never opened: the backoff grows with them, up to a second. */
  private failures = 0;

  constructor(options: ViewerOptions) {
    this.name = options.name;
    const ws = options.base.replace(/^http/, "ws");
    this.url = `${ws}/v1/runs/${encodeURIComponent(options.runId)}/watch?token=${encodeURIComponent(options.token)}`;
  }

  /** The highest seq received: where a reconnect resumes. */
  lastSeq = 0;

  start(): this {
    this.connect();
    return this;
  }

  /** Waits (bounded) for `end`. */
  async finished(timeoutMs = 60_000): Promise<string> {
    return waitFor(
      `viewer ${this.name} to receive end (has ${this.received.length} events, last seq ${this.lastSeq}, ${this.connections} connections)`,
      () => this.ended,
      timeoutMs,
    );
  }

  stop(): void {
    this.stopped = true;
    this.socket?.close();
  }

  private connect(): void {
    if (this.stopped || this.ended !== null) return;
    this.connections++;
    const ws = new WebSocket(`${this.url}&after=${this.lastSeq}`);
    this.socket = ws;
    let over = false;
    let opened = false;
    // Node's WebSocket may report a failed attempt with `error` alone, so either event ends it.
    const reconnect = () => {
      if (over) return;
      over = true;
      try {
        ws.close();
      } catch {}
      this.failures = opened ? 0 : this.failures + 1;
      const delay = 25 + Math.random() * Math.min(1000, 50 * 2 ** this.failures);
      if (!this.stopped && this.ended === null) setTimeout(() => this.connect(), delay);
    };
    ws.addEventListener("open", () => (opened = true));
    ws.addEventListener("message", (message) => this.onFrame(ws, JSON.parse(String(message.data))));
    ws.addEventListener("close", reconnect);
    ws.addEventListener("error", reconnect);
  }

  private onFrame(ws: WebSocket, frame: { type: string; events?: RunEvent[]; status?: string; code?: string }): void {
    if (frame.type === "events") {
      for (const event of frame.events ?? []) {
        const expected = this.lastSeq + 1;
        if (event.seq !== expected) this.anomalies.push(`seq ${event.seq} arrived when ${expected} was next`);
        this.received.push(event);
        this.lastSeq = Math.max(this.lastSeq, event.seq);
      }
    } else if (frame.type === "end") {
      this.ended = frame.status ?? "unknown";
      ws.close(1000, "end received");
    } else if (frame.type === "error") {
      this.anomalies.push(`error frame ${frame.code}`);
    }
  }
}
