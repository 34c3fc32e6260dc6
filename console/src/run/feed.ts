import type { RunEvent, ServerToViewer } from "../../../src/protocol/index.ts";
import { type Api, ApiError } from "../api.ts";

/**
 * A run's events as this page holds them: one contiguous range of seqs, opened on the latest
 * page and grown backwards on demand, and a live tail over the viewer WebSocket that reconnects
 * with backoff from the last seq held. Every event is delivered to the listener exactly once and
 * in order: a repeated seq is dropped, and a gap is filled from the events API before anything
 * after it is shown.
 */
export type LiveState = "connecting" | "live" | "reconnecting" | "ended" | "stopped";

export interface FeedListener {
  /** New events at the end of the range, in order. */
  appended(events: RunEvent[]): void;
  /** The range grew at the start (or was first loaded): re-read `feed.events`. */
  reset(): void;
  live(state: LiveState): void;
  status(status: string): void;
  /** The feed stopped for good: the credential was refused or the run is gone. */
  refused(error: ApiError): void;
}

export const PAGE_SIZE = 500;
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 8000;
const HANDSHAKE_TIMEOUT_MS = 20_000;
const ACK_EVERY_BYTES = 256 * 1024;

export class RunFeed {
  events: RunEvent[] = [];
  /** The `after` cursor of the first held event: events with seq ≤ start are not held. */
  private start = 0;
  private socket: WebSocket | null = null;
  private frames: Promise<void> = Promise.resolve();
  /** Bytes of events frames read since the last `ack`. */
  private unacked = 0;
  private attempts = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private earlier: Promise<void> | null = null;
  private ended = false;
  private disposed = false;
  private readonly api: Api;
  private readonly runId: string;
  private readonly socketToken: (fresh: boolean) => Promise<string>;
  private readonly listener: FeedListener;

  constructor(api: Api, runId: string, socketToken: (fresh: boolean) => Promise<string>, listener: FeedListener) {
    this.api = api;
    this.runId = runId;
    this.socketToken = socketToken;
    this.listener = listener;
  }

  get lastSeq(): number {
    return this.events[this.events.length - 1]?.seq ?? this.start;
  }

  get hasEarlier(): boolean {
    return this.start > 0;
  }

  get loadingEarlier(): boolean {
    return this.earlier !== null;
  }

  /** Loads the latest page (the run's `lastSeq` says where it ends), then tails live. */
  async open(lastSeq: number): Promise<void> {
    this.start = Math.max(0, lastSeq - PAGE_SIZE);
    const page = await this.api.events(this.runId, this.start, PAGE_SIZE);
    if (this.disposed) return;
    this.events = [];
    this.take(page.events);
    this.listener.reset();
    this.connect();
  }

  /** Loads the page before the first held event. Resolves when it is in (or there is none). */
  loadEarlier(): Promise<void> {
    if (!this.hasEarlier || this.disposed) return Promise.resolve();
    this.earlier ??= this.fetchEarlier().finally(() => {
      this.earlier = null;
    });
    return this.earlier;
  }

  /** Loads earlier pages until the event with this seq is held. */
  async reach(seq: number): Promise<void> {
    while (!this.disposed && this.hasEarlier && seq <= this.start) await this.loadEarlier();
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.retryTimer);
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState === WebSocket.OPEN) socket.close(1000);
  }

  private async fetchEarlier(): Promise<void> {
    const before = this.start;
    const after = Math.max(0, before - PAGE_SIZE);
    // A page is bounded in bytes as well as count: read on until the range is whole.
    const earlier: RunEvent[] = [];
    while (after + earlier.length < before) {
      const from = after + earlier.length;
      const page = await this.api.events(this.runId, from, before - from);
      if (this.disposed || this.start !== before) return;
      const expected = page.events.every((event, i) => event.seq === from + 1 + i);
      if (!expected || page.events.length === 0) {
        throw new ApiError("inconsistent", `events ${after + 1}..${before} came back incomplete`);
      }
      earlier.push(...page.events);
    }
    this.events = earlier.concat(this.events);
    this.start = after;
    this.listener.reset();
  }

  /** Appends events that continue the range exactly; returns those that were new. */
  private take(events: readonly RunEvent[]): RunEvent[] {
    const fresh: RunEvent[] = [];
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue; // already held: shown once
      if (event.seq !== this.lastSeq + 1) break; // a gap: the caller fills it
      this.events.push(event);
      fresh.push(event);
    }
    return fresh;
  }

  /** Takes a frame's events, filling any gap before them through the events API. */
  private async accept(events: RunEvent[]): Promise<void> {
    let rest = events.filter((event) => event.seq > this.lastSeq);
    while (rest.length > 0 && !this.disposed) {
      const first = rest[0] as RunEvent;
      if (first.seq > this.lastSeq + 1) await this.fill(first.seq - 1);
      const fresh = this.take(rest);
      if (fresh.length === 0) throw new ApiError("gap", `event ${this.lastSeq + 1} is missing`);
      this.listener.appended(fresh);
      rest = rest.filter((event) => event.seq > this.lastSeq);
    }
  }

  private async fill(upTo: number): Promise<void> {
    while (this.lastSeq < upTo && !this.disposed) {
      const page = await this.api.events(this.runId, this.lastSeq, Math.min(PAGE_SIZE, upTo - this.lastSeq));
      const fresh = this.take(page.events);
      if (fresh.length === 0) throw new ApiError("gap", `event ${this.lastSeq + 1} is missing from the log`);
      this.listener.appended(fresh);
    }
  }

  private connect(): void {
    if (this.disposed || this.ended) return;
    this.listener.live(this.attempts === 0 ? "connecting" : "reconnecting");
    this.socketToken(this.attempts > 0)
      .then((token) => this.openSocket(token))
      .catch((error: unknown) => this.retryAfter(error));
  }

  private openSocket(token: string): void {
    if (this.disposed) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const query = new URLSearchParams({ after: String(this.lastSeq), token });
    const socket = new WebSocket(
      `${scheme}://${location.host}/v1/runs/${encodeURIComponent(this.runId)}/watch?${query}`,
    );
    this.socket = socket;
    this.unacked = 0;
    const handshake = setTimeout(
      () => socket.readyState === WebSocket.CONNECTING && socket.close(),
      HANDSHAKE_TIMEOUT_MS,
    );
    socket.onmessage = (message) => {
      this.frames = this.frames
        .then(() => this.handle(socket, message.data))
        .catch(() => {
          // A gap the events API could not fill, or a failed fetch: start again from the last seq held.
          if (this.socket === socket) socket.close();
        });
    };
    socket.onclose = () => {
      clearTimeout(handshake);
      if (this.socket !== socket) return;
      this.socket = null;
      this.frames = this.frames.then(() => this.retryAfter(null));
    };
  }

  private async handle(socket: WebSocket, raw: unknown): Promise<void> {
    if (this.socket !== socket || typeof raw !== "string") return;
    let frame: ServerToViewer;
    try {
      frame = JSON.parse(raw) as ServerToViewer;
    } catch {
      return;
    }
    if (frame.type === "events") {
      await this.accept(frame.events);
      this.acknowledge(socket, raw.length);
    } else if (frame.type === "status") {
      // The replay is done: from here on the socket is live.
      this.attempts = 0;
      this.listener.live("live");
      this.listener.status(frame.status);
    } else if (frame.type === "error" && frame.code === "viewer_behind") {
      // The edge sends nothing more on this socket (its close, 4008, can come late): reconnect now.
      this.socket = null;
      socket.close();
      this.retryAfter(null);
    } else if (frame.type === "end") {
      this.ended = true;
      this.listener.live("ended");
      this.listener.status(frame.status);
    }
  }

  /**
   * Tells the edge how far this page has read, every ACK_EVERY_BYTES: a viewer that never acks is
   * closed (4008) once it is VIEWER_BACKLOG_MAX_BYTES behind, and reconnects from its last seq.
   */
  private acknowledge(socket: WebSocket, bytes: number): void {
    this.unacked += bytes;
    if (this.unacked < ACK_EVERY_BYTES || socket.readyState !== WebSocket.OPEN) return;
    this.unacked = 0;
    socket.send(JSON.stringify({ type: "ack", seq: this.lastSeq }));
  }

  /** Backs off, checks the run still answers, then reconnects from the last seq held. */
  private retryAfter(error: unknown): void {
    if (this.disposed || this.ended) return;
    if (error instanceof ApiError && error.status !== undefined && [401, 403, 404, 410].includes(error.status)) {
      this.stop(error);
      return;
    }
    this.attempts++;
    this.listener.live("reconnecting");
    const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (this.attempts - 1));
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.api
        .getRun(this.runId)
        .then(() => this.connect())
        .catch((failure: unknown) => this.retryAfter(failure));
    }, delay);
  }

  private stop(error: ApiError): void {
    this.ended = true;
    this.listener.live("stopped");
    this.listener.refused(error);
  }
}
