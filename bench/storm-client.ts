/**
 * The storm's clients, each one object across every reconnect, as a real client is: a viewer that
 * reconnects from its cursor (`?after=` its last seq) and must see every event once, in order; a
 * runner that says hello again with its epoch and must be claimed with its acked sourceSeq. Both
 * retry with the backoff of the client they stand for (the SDK's watch: 250 ms to 5 s; the bridge:
 * 250 ms to 15 s), the first attempt at once. Each failed attempt is recorded by kind, so a storm
 * that loses sockets says how (refused, closed before its answer, no answer in time).
 */
import { performance } from "node:perf_hooks";
import { backoffMs } from "../client/src/transport.ts";
import { backoffDelay } from "../runner-bridge/src/connection.ts";
import { runnerEvent } from "./payloads.ts";
import type { BenchRun } from "./runner-socket.ts";
import type { Target } from "./targets.ts";

/** An attempt with no answer (open, then `status` or `claimed`) in this long is abandoned and retried. */
const ATTEMPT_MS = 15_000;
/** Stop retrying after this long without a working connection (the SDK's default is 5 min). */
const GIVE_UP_MS = 300_000;

/** Failed attempts (or drops) by kind, each with when it began (performance.now()), shared by a storm's clients. */
export type Failures = Map<string, number[]>;

export function count(failures: Failures, kind: string, at = performance.now()): void {
  const times = failures.get(kind) ?? [];
  times.push(at);
  failures.set(kind, times);
}

type Ctor = new (url: string, init?: { headers?: Record<string, string>; dispatcher?: unknown }) => WebSocket;
const Socket = WebSocket as unknown as Ctor;

interface Handler {
  onHeaders?(status: number, ...rest: unknown[]): unknown;
  onData?(chunk: Uint8Array): unknown;
}
interface Dispatcher {
  dispatch(options: unknown, handler: Handler): unknown;
}
/** Node's own undici dispatcher, which its WebSocket uses unless given another. */
const GLOBAL_DISPATCHER = (globalThis as Record<symbol, Dispatcher | undefined>)[
  Symbol.for("undici.globalDispatcher.1")
];

/**
 * Node's WebSocket reports a refused upgrade and a dead connection alike ("Received network error
 * or non-101 status code"). This dispatcher, in front of Node's own, keeps the handshake's HTTP
 * status and the start of its body, so a failed attempt says which it was.
 */
function recordingDispatcher(): { dispatcher: Dispatcher | undefined; answer(): string | null } {
  let answer: string | null = null;
  if (!GLOBAL_DISPATCHER) return { dispatcher: undefined, answer: () => null };
  const base = GLOBAL_DISPATCHER;
  const dispatcher: Dispatcher = {
    dispatch(options, handler) {
      const wrapped = Object.create(handler) as Handler;
      wrapped.onHeaders = (status, ...rest) => {
        answer = `HTTP ${status}`;
        return handler.onHeaders?.(status, ...rest);
      };
      wrapped.onData = (chunk) => {
        if (answer?.startsWith("HTTP") && !answer.includes(":")) {
          const code = /"code":"([^"]+)"/.exec(new TextDecoder().decode(chunk.slice(0, 300)))?.[1];
          if (code) answer += `: ${code}`;
        }
        return handler.onData?.(chunk);
      };
      return base.dispatch(options, wrapped);
    },
  };
  return { dispatcher, answer: () => answer };
}

/**
 * One attempt: opens `url`, sends `greeting` once open, and resolves once `onFrame` calls a frame
 * the answer; rejects with the failure's kind otherwise. A connection lost after its answer is
 * reported once to `onLost`.
 */
function attempt(
  url: string,
  headers: Record<string, string> | undefined,
  greeting: string | null,
  onFrame: (frame: Record<string, unknown>) => "answered" | "more" | string,
  onLost: (kind: string) => void,
  onOpen: () => void,
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const recording = recordingDispatcher();
    const ws = new Socket(url, {
      ...(headers ? { headers } : {}),
      ...(recording.dispatcher ? { dispatcher: recording.dispatcher } : {}),
    });
    let state: "pending" | "answered" | "over" = "pending";
    let opened = false;
    const fail = (kind: string) => {
      clearTimeout(timer);
      if (state === "pending") reject(new Error(kind));
      else if (state === "answered") onLost(kind);
      state = "over";
    };
    const timer = setTimeout(() => {
      fail(opened ? `opened, no answer in ${ATTEMPT_MS} ms` : `not opened in ${ATTEMPT_MS} ms`);
      ws.close();
    }, ATTEMPT_MS);
    ws.addEventListener("open", () => {
      opened = true;
      onOpen();
      if (greeting) ws.send(greeting);
    });
    ws.addEventListener("message", (event) => {
      if (state === "over") return;
      const verdict = onFrame(JSON.parse(String(event.data)) as Record<string, unknown>);
      if (verdict === "answered") {
        if (state !== "pending") return;
        state = "answered";
        clearTimeout(timer);
        resolve(ws);
      } else if (verdict !== "more") {
        fail(verdict);
        ws.close();
      }
    });
    ws.addEventListener("error", () =>
      fail(
        opened
          ? "socket error after opening"
          : `refused: ${recording.answer() ?? "no HTTP answer (connection failed)"}`,
      ),
    );
    ws.addEventListener("close", (event) =>
      fail(opened ? `closed ${event.code} after opening` : `closed ${event.code} before opening`),
    );
  });
}

/** Retries `once` with `delay(attempt)` between attempts until it succeeds or GIVE_UP_MS passes. */
async function reconnect<T>(
  what: string,
  failures: Failures,
  delay: (n: number) => number,
  once: () => Promise<T>,
): Promise<T> {
  const since = performance.now();
  for (let n = 0; ; n++) {
    // When the attempt began, not when its failure was seen: a busy client sees a refusal late.
    const began = performance.now();
    try {
      return await once();
    } catch (error) {
      const kind = (error as Error).message;
      count(failures, kind, began);
      if (performance.now() - since > GIVE_UP_MS)
        throw new Error(`${what}: no connection in ${GIVE_UP_MS} ms (${kind})`);
    }
    await new Promise((resolve) => setTimeout(resolve, delay(n)));
  }
}

export class StormViewer {
  /** Every event's seq as received, across connections: the transcript checked at the end. */
  readonly seqs: number[] = [];
  readonly runnerSeqs: number[] = [];
  /** Gaps, duplicates and error frames: any one fails the transcript. */
  readonly problems: string[] = [];
  /** When the current connection was answered (`status`: replayed and live), and when it opened (101). */
  attachedAt = 0;
  openedAt = 0;
  private lastSeq = 0;
  private ended = false;
  private connected = false;
  private endWaiters: (() => void)[] = [];
  private lostWaiters: ((kind: string) => void)[] = [];

  private readonly target: Target;
  readonly run: BenchRun;

  constructor(target: Target, run: BenchRun) {
    this.target = target;
    this.run = run;
  }

  private url(): string {
    const base = this.target.url.replace(/^http/, "ws");
    return `${base}/v1/runs/${this.run.runId}/watch?after=${this.lastSeq}&token=${encodeURIComponent(this.run.viewerToken)}`;
  }

  private frame(frame: Record<string, unknown>): "answered" | "more" | string {
    if (frame.type === "events") {
      for (const e of frame.events as { seq: number; sourceSeq?: number; source: string }[]) {
        if (e.seq !== this.lastSeq + 1) {
          this.problems.push(`seq ${e.seq} after ${this.lastSeq}`);
          if (e.seq <= this.lastSeq) continue;
        }
        this.lastSeq = e.seq;
        this.seqs.push(e.seq);
        if (e.source === "runner" && e.sourceSeq !== undefined) this.runnerSeqs.push(e.sourceSeq);
      }
      return "more";
    }
    if (frame.type === "status") return "answered";
    if (frame.type === "end") {
      this.ended = true;
      for (const wake of this.endWaiters.splice(0)) wake();
      return "more";
    }
    if (frame.type === "error") {
      // viewer_behind asks it to reconnect from its cursor (as the SDK does); anything else is wrong.
      if (frame.code !== "viewer_behind") this.problems.push(`error frame ${JSON.stringify(frame)}`);
      return `error frame ${String(frame.code)}`;
    }
    return "more";
  }

  /**
   * Connects (again, from the cursor), retrying until answered; resolves with the answer's time.
   * Failed attempts are counted in `failures` by kind.
   */
  async connect(failures: Failures): Promise<number> {
    await reconnect(
      `viewer of ${this.run.runId}`,
      failures,
      (n) => backoffMs(n, 250, 5_000),
      () =>
        attempt(
          this.url(),
          undefined,
          null,
          (frame) => this.frame(frame),
          (kind) => {
            this.connected = false;
            if (this.ended) return;
            for (const wake of this.lostWaiters.splice(0)) wake(kind);
          },
          () => (this.openedAt = performance.now()),
        ),
    );
    this.connected = true;
    this.attachedAt = performance.now();
    return this.attachedAt;
  }

  /** Resolves with how the current connection was lost (the deploy), once it is. */
  lost(): Promise<string> {
    if (!this.connected) return Promise.resolve("lost before the deploy");
    return new Promise((resolve) => this.lostWaiters.push(resolve));
  }

  /** Resolves on the run's `end` frame. */
  end(): Promise<void> {
    return this.ended ? Promise.resolve() : new Promise((resolve) => this.endWaiters.push(resolve));
  }
}

export class StormRunner {
  private ws: WebSocket | null = null;
  private epoch: number | undefined;
  private acked = 0;
  private waiting: ((frame: Record<string, unknown>) => void) | null = null;
  private lostWaiters: ((kind: string) => void)[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private connected = false;
  /** When the current connection opened (101). */
  openedAt = 0;

  private readonly target: Target;
  readonly run: BenchRun;

  constructor(target: Target, run: BenchRun) {
    this.target = target;
    this.run = run;
  }

  /** Connects (again), says hello with its epoch, and resolves when claimed with its acked sourceSeq. */
  async connect(failures: Failures): Promise<number> {
    const url = `${this.target.url.replace(/^http/, "ws")}/v1/runs/${this.run.runId}/runner`;
    this.ws = await reconnect(
      `runner of ${this.run.runId}`,
      failures,
      (n) => backoffDelay(n, 250, 15_000),
      () => {
        let claimed = false;
        return attempt(
          url,
          { authorization: `Bearer ${this.run.runnerToken}` },
          JSON.stringify(this.hello()),
          (frame) => {
            if (!claimed) {
              if (frame.type !== "claimed") return `answered ${String(frame.type)} instead of claimed`;
              if (frame.ackedSourceSeq !== this.acked)
                return `claimed with ackedSourceSeq ${String(frame.ackedSourceSeq)}, not ${this.acked}`;
              claimed = true;
              this.epoch = frame.epoch as number;
              this.beat(frame.heartbeatMs as number);
              return "answered";
            }
            const wake = this.waiting;
            this.waiting = null;
            wake?.(frame);
            return "more";
          },
          (kind) => {
            clearInterval(this.heartbeat);
            this.connected = false;
            for (const wake of this.lostWaiters.splice(0)) wake(kind);
          },
          () => (this.openedAt = performance.now()),
        );
      },
    );
    this.connected = true;
    return performance.now();
  }

  /** Heartbeats at a third of the lease, as the bridge does, so no run stalls while it is set up. */
  private beat(heartbeatMs: number): void {
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(
      () => this.ws?.send(JSON.stringify({ type: "heartbeat", epoch: this.epoch })),
      Math.max(50, Math.floor(heartbeatMs / 3)),
    );
  }

  lost(): Promise<string> {
    if (!this.connected) return Promise.resolve("lost before the deploy");
    return new Promise((resolve) => this.lostWaiters.push(resolve));
  }

  /** Sends one frame and waits (bounded) for the next frame, which must be of type `type`. */
  private async exchange(frame: unknown, type: string): Promise<Record<string, unknown>> {
    const ws = this.ws as WebSocket;
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`runner of ${this.run.runId}: no ${type} in ${ATTEMPT_MS} ms`)),
        ATTEMPT_MS,
      );
      this.waiting = (got) => {
        clearTimeout(timer);
        if (got.type === type) resolve(got);
        else reject(new Error(`runner of ${this.run.runId}: expected ${type}, got ${JSON.stringify(got)}`));
      };
    });
    ws.send(JSON.stringify(frame));
    return answer;
  }

  /** Events `acked + 1` through `acked + n`, in one frame, acked. */
  async sendEvents(n: number): Promise<void> {
    const events = Array.from({ length: n }, (_, i) => runnerEvent(this.acked + i + 1));
    const ack = await this.exchange({ type: "events", epoch: this.epoch, events }, "ack");
    if (ack.highestSourceSeq !== this.acked + n) {
      throw new Error(`runner of ${this.run.runId}: ack ${JSON.stringify(ack)}, expected ${this.acked + n}`);
    }
    this.acked += n;
  }

  async complete(): Promise<void> {
    await this.exchange(
      { type: "complete", epoch: this.epoch, outcome: { status: "succeeded", exitCode: 0 } },
      "completed",
    );
  }

  /** The bridge's hello: its runner id, how far it got, and (on a reconnect) the epoch it held. */
  private hello(): Record<string, unknown> {
    return {
      type: "hello",
      runnerId: "bench-runner",
      lastSourceSeq: this.acked,
      ...(this.epoch ? { epoch: this.epoch } : {}),
    };
  }

  close(): void {
    clearInterval(this.heartbeat);
    this.ws?.close();
  }
}
