/**
 * `watch`: a run's events exactly once, in order and without gaps, across any number of
 * disconnects. It follows the viewer socket from the last seq it yielded; an event past
 * last + 1 means frames were lost, and the gap is read over `GET /events` before going on; a
 * socket that stops delivering while the log grows is dropped (liveness.ts). It ends with the
 * run's terminal record.
 */
import type { RunEvent, RunRecord, RunStatus } from "../../src/protocol/index.ts";
import type { EdgeClient } from "./calls.ts";
import { ApiError } from "./errors.ts";
import { watchLiveness } from "./liveness.ts";
import {
  openViewer,
  type SocketDial,
  type SocketOpener,
  type ViewerConnection,
  type WebSocketConstructor,
} from "./socket.ts";
import { backoffMs } from "./transport.ts";

export interface WatchOptions {
  /** Yield events after this seq (default 0: the whole log). */
  after?: number;
  /** Ends the watch: the iterator finishes without an `end` update. */
  signal?: AbortSignal;
  /**
   * A viewer token for `?token=`: browsers and Workers cannot set an Authorization header on a
   * WebSocket. Without it the client's key goes in the header (Node).
   */
  viewerToken?: string;
  /** How often to check over HTTP that a quiet socket still delivers (default 15 s). */
  checkMs?: number;
  /** Give up after this long without a working connection (default 5 min). */
  giveUpMs?: number;
  /** Another WebSocket constructor than the global one. */
  WebSocket?: WebSocketConstructor;
  /**
   * Opens each viewer socket instead of `new WebSocket(url)`, given its http(s) URL and headers:
   * in a Worker, `socketOverFetch(env.EDGE.fetch.bind(env.EDGE))` upgrades through a service
   * binding, which `new WebSocket` cannot reach. With it the client's key goes in the header.
   */
  openSocket?: SocketOpener;
}

export type WatchUpdate =
  | { type: "event"; event: RunEvent }
  | { type: "status"; status: RunStatus }
  /** The connection dropped (`reason`) or came back (`reason` null); the watch carries on. */
  | { type: "connection"; reason: string | null; lastSeq: number }
  | { type: "end"; run: RunRecord };

const OPEN_TIMEOUT_MS = 15_000;
/** How much of the log the watch reads between its `ack` frames (the edge bounds a viewer's backlog). */
const ACK_EVERY_BYTES = 256 * 1024;

export async function* watchRun(
  client: EdgeClient,
  runId: string,
  options: WatchOptions = {},
): AsyncGenerator<WatchUpdate, void, undefined> {
  const { signal } = options;
  const Ctor = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  const { openSocket } = options;
  if (!Ctor && !openSocket)
    throw new ApiError("unsupported", "no WebSocket here: pass options.WebSocket or openSocket");
  const checkMs = options.checkMs ?? 15_000;
  const giveUpMs = options.giveUpMs ?? 300_000;
  const call = signal ? { signal } : {};
  let lastSeq = options.after ?? 0;
  // Verdicts (unknown run, bad key, purged) come from one plain request, not a refused upgrade.
  await client.getRun(runId, call);
  let current: ViewerConnection | null = null;
  const onAbort = () => current?.close("aborted");
  signal?.addEventListener("abort", onAbort);
  const liveness = watchLiveness(
    client,
    runId,
    checkMs,
    () => lastSeq,
    (reason) => current?.close(reason),
  );
  /** Every event of the log from lastSeq + 1 through `through` (or the log's end), over HTTP. */
  async function* fill(through: number): AsyncGenerator<WatchUpdate> {
    while (lastSeq < through) {
      const page = await client.events(runId, { after: lastSeq, ...call });
      for (const event of page.events) {
        if (event.seq > through) return;
        if (event.seq !== lastSeq + 1) {
          throw new ApiError("bad_response", `GET /events after ${lastSeq} answered seq ${event.seq}`);
        }
        lastSeq = event.seq;
        yield { type: "event", event };
      }
      if (!page.hasMore) return;
    }
  }
  try {
    let lostAt: number | null = null;
    let attempt = 0;
    for (;;) {
      const path = `/v1/runs/${encodeURIComponent(runId)}/watch?after=${lastSeq}`;
      const url = `${client.url}${path}${options.viewerToken ? `&token=${encodeURIComponent(options.viewerToken)}` : ""}`;
      const headers = options.viewerToken ? undefined : { authorization: `Bearer ${client.transport.key}` };
      const dial: SocketDial = openSocket
        ? { kind: "open", opener: openSocket, url, headers }
        : { kind: "construct", Ctor: Ctor as WebSocketConstructor, url: url.replace(/^http/, "ws"), headers };
      current = openViewer(dial, OPEN_TIMEOUT_MS);
      liveness.reset();
      let unacked = 0;
      let reason: string | null = null;
      while (reason === null) {
        if (signal?.aborted) return;
        const news = await current.next();
        if (news.kind === "closed") {
          reason = news.reason;
          break;
        }
        const frame = news.frame;
        if (lostAt !== null) {
          lostAt = null;
          attempt = 0;
          yield { type: "connection", reason: null, lastSeq };
        }
        if (frame.type === "events") {
          for (const event of frame.events) {
            if (event.seq <= lastSeq) continue;
            if (event.seq > lastSeq + 1) yield* fill(event.seq - 1);
            if (event.seq !== lastSeq + 1) continue;
            lastSeq = event.seq;
            yield { type: "event", event };
          }
          unacked += news.bytes;
          if (unacked >= ACK_EVERY_BYTES) {
            unacked = 0;
            current.send({ type: "ack", seq: lastSeq });
          }
        } else if (frame.type === "status") {
          yield { type: "status", status: frame.status };
        } else if (frame.type === "end") {
          current.close("ended");
          const run = await client.getRun(runId, call);
          // The end frame follows the last event; a lost tail is read over HTTP.
          yield* fill(run.lastSeq);
          yield { type: "end", run };
          return;
        } else if (frame.type === "error" && frame.code === "viewer_behind") {
          current.close(`the edge asked to reconnect (${frame.message})`);
        }
      }
      if (signal?.aborted) return;
      lostAt ??= Date.now();
      if (Date.now() - lostAt >= giveUpMs) {
        throw new ApiError(
          "unreachable",
          `lost the watch connection to ${client.url} (${reason}) and could not reconnect within ${giveUpMs} ms`,
        );
      }
      yield { type: "connection", reason, lastSeq };
      await pause(backoffMs(attempt++, 250, 5_000), signal);
      try {
        await client.getRun(runId, call);
      } catch (err) {
        // A verdict (purged, key revoked) will not change by trying again; anything else might.
        if (err instanceof ApiError && (err.isVerdict || err.code === "aborted")) throw err;
      }
    }
  } finally {
    liveness.stop();
    signal?.removeEventListener("abort", onAbort);
    current?.close("watch ended");
  }
}

/** Only the events of a watch, for callers that want nothing else. */
export async function* watchEvents(
  client: EdgeClient,
  runId: string,
  options: WatchOptions = {},
): AsyncGenerator<RunEvent, RunRecord | undefined, undefined> {
  for await (const update of watchRun(client, runId, options)) {
    if (update.type === "event") yield update.event;
    else if (update.type === "end") return update.run;
  }
  return undefined;
}

const pause = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
