/**
 * `watch`: follows a run over the viewer WebSocket until it ends. After any drop it reconnects
 * with `after` = the last seq shown, and shows only events past it, so every event is shown once.
 */
import { isTerminal, type RunEvent, type RunStatus } from "../../src/protocol/index.ts";
import { EXIT, type ExitCode } from "./args.ts";
import { type Api, CliError, runPath } from "./client.ts";
import { paintFor } from "./format.ts";
import { terminalText, terminalValue } from "./safe-text.ts";
import { type Liveness, watchLiveness } from "./liveness.ts";
import { jsonView, plainView, ttyView, type View } from "./views.ts";

export interface WatchOptions {
  after: number;
  json: boolean;
  /** Stop reconnecting after this long without a working connection. */
  giveUpMs: number;
  /** How often to check over HTTP that the socket is still delivering the log. */
  checkMs: number;
}

const OUTCOME_EXIT: Record<string, ExitCode> = {
  succeeded: EXIT.ok,
  failed: EXIT.failed,
  cancelled: EXIT.cancelled,
  timed_out: EXIT.timedOut,
};
const OPEN_TIMEOUT_MS = 15_000;
/** How much of the log the watch reads between its `ack` frames. */
const ACK_EVERY_BYTES = 256 * 1024;
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5_000;

type Attempt = { kind: "end"; status: RunStatus } | { kind: "dropped"; reason: string };

interface Connection {
  done: Promise<Attempt>;
  /** Gives up on this socket (it went stale). */
  drop(reason: string): void;
}

interface FrameHandlers {
  events(events: RunEvent[]): void;
  status(status: RunStatus): void;
}

export async function watchRun(api: Api, runId: string, options: WatchOptions): Promise<ExitCode> {
  // Verdicts (unknown run, bad key, purged) come from one plain request before anything is shown.
  const run = await api.getRun(runId);
  const viewOptions = {
    runId,
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
    status: run.status,
    after: options.after,
    paint: paintFor(process.stdout),
    out: process.stdout,
    err: process.stderr,
  };
  const view: View = options.json
    ? jsonView(viewOptions)
    : process.stdout.isTTY
      ? ttyView(viewOptions)
      : plainView(viewOptions);
  let finished = false;
  let liveness: Liveness | null = null;
  const onSigint = () => {
    view.finish(null);
    process.exit(EXIT.interrupted);
  };
  process.once("SIGINT", onSigint);
  try {
    let lastSeq = options.after;
    let lostAt: number | null = null;
    let attempt = 0;
    /** The first frame after a drop: say so, and start the give-up clock afresh next time. */
    const back = () => {
      if (lostAt !== null) view.connection(null, lastSeq);
      lostAt = null;
      attempt = 0;
    };
    const handlers: FrameHandlers = {
      events(events) {
        back();
        for (const event of events) {
          if (event.seq <= lastSeq) continue;
          view.event(event);
          lastSeq = event.seq;
        }
      },
      status(status) {
        back();
        view.status(status);
      },
    };
    let current: Connection | null = null;
    liveness = watchLiveness(
      api,
      runId,
      options.checkMs,
      () => lastSeq,
      (reason) => current?.drop(reason),
    );
    for (;;) {
      current = connect(api, runId, lastSeq, handlers);
      liveness.reset();
      const result = await current.done;
      if (result.kind === "end") {
        const exit = OUTCOME_EXIT[result.status];
        // `end` always carries an outcome; anything else is a server fault, said as one.
        if (exit === undefined) {
          throw new CliError("bad_response", `the server ended the watch of ${runId} with status ${result.status}`);
        }
        finished = true;
        view.finish(result.status);
        return exit;
      }
      lostAt ??= Date.now();
      if (Date.now() - lostAt >= options.giveUpMs) {
        throw new CliError(
          "unreachable",
          `lost the watch connection to ${api.url} (${result.reason}) and could not reconnect within ${options.giveUpMs} ms`,
        );
      }
      view.connection(result.reason, lastSeq);
      await sleep(backoff(attempt++));
      try {
        await api.getRun(runId);
      } catch (err) {
        // A verdict (purged, key revoked) will not change by trying again; anything else might.
        if (err instanceof CliError && err.isVerdict) throw err;
      }
    }
  } finally {
    liveness?.stop();
    process.off("SIGINT", onSigint);
    if (!finished) view.finish(null);
  }
}

export function exitForStatus(status: RunStatus): ExitCode | null {
  return isTerminal(status) ? (OUTCOME_EXIT[status] ?? EXIT.error) : null;
}

function backoff(attempt: number): number {
  const cap = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** attempt);
  return cap / 2 + Math.random() * (cap / 2);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface NodeWebSocket {
  close(code?: number): void;
  send(data: string): void;
  addEventListener(type: "open", listener: () => void): void;
  addEventListener(type: "message", listener: (ev: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (ev: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: () => void): void;
}
type NodeWebSocketCtor = new (url: string, init: { headers: Record<string, string> }) => NodeWebSocket;

export function watchSocketUrl(api: Api, runId: string, after: number): string {
  return `${api.url.replace(/^http/, "ws")}${runPath(runId, "/watch")}?after=${after}`;
}

/** One connection: done when the run ends or the socket drops, whichever comes first. */
function connect(api: Api, runId: string, after: number, handlers: FrameHandlers): Connection {
  const Ctor = (globalThis as unknown as { WebSocket?: NodeWebSocketCtor }).WebSocket;
  if (!Ctor) throw new CliError("unsupported", "this Node has no WebSocket client (Node 22 or later is needed)");
  let drop: (reason: string) => void = () => {};
  const done = new Promise<Attempt>((resolve) => {
    // The key goes in a header, not the URL (Node's client can set headers; browsers cannot).
    const ws = new Ctor(watchSocketUrl(api, runId, after), { headers: { authorization: `Bearer ${api.key}` } });
    let settled = false;
    const settle = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(openTimer);
      try {
        ws.close(1000);
      } catch {
        // not open yet
      }
      resolve(attempt);
    };
    const openTimer = setTimeout(
      () => settle({ kind: "dropped", reason: `no answer within ${OPEN_TIMEOUT_MS / 1000} s` }),
      OPEN_TIMEOUT_MS,
    );
    ws.addEventListener("open", () => clearTimeout(openTimer));
    let unacked = 0;
    ws.addEventListener("message", (ev) => {
      if (settled) return;
      const parsed = parseFrame(ev.data);
      const frame = api.forTerminal ? terminalValue(parsed) : parsed;
      if (frame?.type === "events" && Array.isArray(frame.events)) {
        const events = frame.events as RunEvent[];
        handlers.events(events);
        // Saying how far it has read keeps the edge sending (a viewer that never acks is closed
        // with 4008 once it is VIEWER_BACKLOG_MAX_BYTES behind, and reconnects from here).
        unacked += frameBytes(ev.data);
        const last = events.at(-1);
        if (last && unacked >= ACK_EVERY_BYTES) {
          unacked = 0;
          ws.send(JSON.stringify({ type: "ack", seq: last.seq }));
        }
      } else if (frame?.type === "status" && typeof frame.status === "string")
        handlers.status(frame.status as RunStatus);
      else if (frame?.type === "end" && typeof frame.status === "string")
        settle({ kind: "end", status: frame.status as RunStatus });
      // The edge stops sending to a viewer that fell behind (its close, 4008, can come late).
      else if (frame?.type === "error" && frame.code === "viewer_behind")
        settle({ kind: "dropped", reason: `the edge asked to reconnect (${String(frame.message)})` });
    });
    ws.addEventListener("close", (ev) =>
      settle({ kind: "dropped", reason: `socket closed ${ev.code}${ev.reason ? ` ${terminalText(ev.reason)}` : ""}` }),
    );
    // Node's client reports a refused upgrade with an error and may never send a close.
    ws.addEventListener("error", () => settle({ kind: "dropped", reason: "socket error" }));
    drop = (reason) => settle({ kind: "dropped", reason });
  });
  return { done, drop: (reason) => drop(reason) };
}

function frameBytes(data: unknown): number {
  return typeof data === "string" ? data.length : data instanceof ArrayBuffer ? data.byteLength : 0;
}

function parseFrame(data: unknown): Record<string, unknown> | null {
  const text = typeof data === "string" ? data : data instanceof ArrayBuffer ? Buffer.from(data).toString() : null;
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
