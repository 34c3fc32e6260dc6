import type { RunEvent } from "../../../src/protocol/index.ts";
import { type Api, ApiError } from "../api.ts";

/**
 * A run's events as this page holds them: one contiguous range of seqs, opened on the latest
 * page and grown backwards on demand, and a live tail through the SDK's watch that reconnects
 * with backoff from the last seq held. Every event is delivered to the listener exactly once and
 * in order.
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

export class RunFeed {
  events: RunEvent[] = [];
  /** The `after` cursor of the first held event: events with seq ≤ start are not held. */
  private start = 0;
  private readonly stopped = new AbortController();
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
    void this.tail();
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
    this.stopped.abort();
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
      if (event.seq !== this.lastSeq + 1) break; // cannot happen: the watch fills gaps before going on
      this.events.push(event);
      fresh.push(event);
    }
    return fresh;
  }

  /**
   * The live tail: the SDK's watch from the last seq held, which delivers each event once and
   * fills any gap itself. A connection it loses is followed here, with a fresh socket token
   * (one minted for an API key may have expired), from the last seq held.
   */
  private async tail(): Promise<void> {
    let attempts = 0;
    while (!this.disposed && !this.ended) {
      this.listener.live(attempts === 0 ? "connecting" : "reconnecting");
      try {
        const viewerToken = await this.socketToken(attempts > 0);
        if (await this.follow(viewerToken)) attempts = 0;
      } catch (error) {
        if (error instanceof ApiError && error.isVerdict) return this.stop(error);
      }
      if (this.disposed || this.ended) return;
      attempts++;
      this.listener.live("reconnecting");
      const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (attempts - 1));
      await new Promise((resolve) => {
        this.retryTimer = setTimeout(resolve, ceiling / 2 + Math.random() * (ceiling / 2));
      });
    }
  }

  /** One watch until its connection drops or the run ends; true when it got as far as live. */
  private async follow(viewerToken: string): Promise<boolean> {
    let live = false;
    const pending: RunEvent[] = [];
    const flush = () => {
      const fresh = this.take(pending.splice(0));
      if (fresh.length > 0 && !this.disposed) this.listener.appended(fresh);
    };
    let flushTimer: ReturnType<typeof setTimeout> | undefined;
    const watch = this.api.client.watch(this.runId, { after: this.lastSeq, viewerToken, signal: this.stopped.signal });
    try {
      for await (const update of watch) {
        if (update.type === "event") {
          // a frame's events arrive one by one: shown together once the frame is through
          pending.push(update.event);
          flushTimer ??= setTimeout(() => {
            flushTimer = undefined;
            flush();
          }, 0);
          continue;
        }
        flush();
        if (update.type === "status") {
          // The replay is done: from here on the watch is live.
          live = true;
          this.listener.live("live");
          this.listener.status(update.status);
        } else if (update.type === "connection" && update.reason !== null) {
          return live;
        } else if (update.type === "end") {
          this.ended = true;
          this.listener.live("ended");
          this.listener.status(update.run.status);
          return live;
        }
      }
      return live;
    } finally {
      clearTimeout(flushTimer);
      flush();
      await watch.return();
    }
  }

  private stop(error: ApiError): void {
    this.ended = true;
    this.listener.live("stopped");
    this.listener.refused(error);
  }
}
