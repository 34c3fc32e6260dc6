import { CLOSE_FENCED, CLOSE_REJECTED, type RunnerFrame, type ServerToRunner } from "../../src/protocol/index.ts";
import { preflight } from "./edge.ts";
import { encodeRunnerFrame, parseServerFrame } from "./frames.ts";
import type { Logger } from "./logger.ts";
import { sleep } from "./poll.ts";
import { connectSocket, type Socket } from "./socket.ts";

export interface ConnectionOptions {
  edge: string;
  runId: string;
  token: string;
  /** Names this bridge process in every `hello`; the same across its reconnects. */
  runnerId: string;
  log: Logger;
  /** Give up reconnecting after this long without a claim. */
  giveUpMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** How long a connection may take to be claimed. */
  claimTimeoutMs: number;
  /** The agent generation this bridge serves, named in `hello` (absent: the edge's current one). */
  generation?: number;
  /** This process resumes its generation from a checkpoint: its first `hello` says so (`resume`). */
  resume?: boolean;
}

export type ClaimedFrame = Extract<ServerToRunner, { type: "claimed" }>;
export type EdgeFrame = Exclude<ServerToRunner, { type: "claimed" }>;
type HelloFrame = Extract<RunnerFrame, { type: "hello" }>;

/** Why the connection stopped for good. */
export type ConnectionEnd =
  | { kind: "fenced"; detail: string }
  | { kind: "run-over"; detail: string }
  | { kind: "unknown-run" }
  | { kind: "gave-up" };

export interface ConnectionHost {
  /** The highest journal line read so far (informational, for `hello`). */
  lastSourceSeq(): number;
  claimed(frame: ClaimedFrame): void;
  frame(frame: EdgeFrame): void;
  ended(end: ConnectionEnd): void;
}

type State =
  | { kind: "idle" }
  /** Socket opening or open, `hello` sent, no `claimed` yet. */
  | { kind: "connecting"; socket: Socket; claimTimer: ReturnType<typeof setTimeout> }
  | { kind: "claimed"; socket: Socket; epoch: number; heartbeat: ReturnType<typeof setInterval> }
  /** Between attempts, in backoff. */
  | { kind: "waiting" }
  | { kind: "closed" };

/**
 * The runner WebSocket to the edge, kept up for one bridge process: connect, say `hello`, wait
 * (bounded) for `claimed`, heartbeat while claimed, and after any loss reconnect with full-jitter
 * backoff until claimed again or `giveUpMs` passes without a claim.
 */
export class Connection {
  private readonly options: ConnectionOptions;
  private readonly host: ConnectionHost;
  private state: State = { kind: "idle" };
  /** The epoch of this process's last claim, named in `hello` after a cut; null before the first. */
  private held: number | null = null;
  /** The generation this process serves: as asked for, then as claimed (a late old one is fenced). */
  private generation: number | undefined;

  constructor(options: ConnectionOptions, host: ConnectionHost) {
    this.options = options;
    this.host = host;
    this.generation = options.generation;
  }

  start(): void {
    if (this.state.kind === "idle") void this.keepConnected();
  }

  /** The current claim's epoch, or null while not claimed. */
  get epoch(): number | null {
    return this.state.kind === "claimed" ? this.state.epoch : null;
  }

  /** The epoch of the last claim this process held, or null when it was never claimed. */
  get heldEpoch(): number | null {
    return this.held;
  }

  /** Bytes queued on the socket and not yet sent. */
  bufferedAmount(): number {
    return this.state.kind === "claimed" ? this.state.socket.bufferedAmount() : 0;
  }

  /** Sends a frame on a claimed, open connection; false when there is none. */
  send(frame: RunnerFrame): boolean {
    if (this.state.kind !== "claimed" || !this.state.socket.isOpen()) return false;
    this.state.socket.send(encodeRunnerFrame(frame));
    return true;
  }

  /** Closes for good; nothing more is sent or reported. */
  close(): void {
    this.leave({ kind: "closed" });
  }

  private get closed(): boolean {
    return this.state.kind === "closed";
  }

  private end(end: ConnectionEnd): void {
    if (this.closed) return;
    this.close();
    this.host.ended(end);
  }

  /** Leaves the current state: its timers stop, and when closing for good its socket closes too. */
  private leave(next: State): void {
    const state = this.state;
    if (state.kind === "closed") return;
    if (state.kind === "connecting") clearTimeout(state.claimTimer);
    if (state.kind === "claimed") clearInterval(state.heartbeat);
    this.state = next;
    if ((state.kind === "connecting" || state.kind === "claimed") && next.kind === "closed") state.socket.close();
  }

  private async keepConnected(): Promise<void> {
    const { giveUpMs, reconnectMinMs, reconnectMaxMs } = this.options;
    let attempt = 0;
    let failingSince = Date.now();
    while (!this.closed) {
      if (attempt > 0 && this.held !== null) {
        const end = await this.lookWhileAway();
        if (end) return this.end(end);
        if (this.closed) return;
      }
      const claimed = await this.attempt();
      if (this.closed) return;
      if (claimed) {
        attempt = 0;
        failingSince = Date.now();
      }
      attempt++;
      const waited = Date.now() - failingSince;
      if (waited > giveUpMs) return this.end({ kind: "gave-up" });
      const delay = Math.min(backoffDelay(attempt, reconnectMinMs, reconnectMaxMs), giveUpMs - waited + 1);
      this.options.log.info(`connection lost; reconnecting in ${delay} ms (attempt ${attempt})`);
      await sleep(delay);
    }
  }

  /**
   * One look at the run before reconnecting: a run that ended or vanished meanwhile ends the
   * connection. Whether a successor claimed it is left to `hello`, which names the epoch held:
   * only the edge can tell a successor's claim from this bridge's own claim whose `claimed` was lost.
   */
  private async lookWhileAway(): Promise<ConnectionEnd | null> {
    const { edge, runId, token } = this.options;
    const look = await preflight(edge, runId, token, 5000);
    if (look.kind === "terminal")
      return { kind: "run-over", detail: `ended on the edge (${look.status}) while disconnected` };
    if (look.kind === "unknown") return { kind: "unknown-run" };
    return null;
  }

  /** One connection; resolves when it closes, with whether it was claimed. */
  private attempt(): Promise<boolean> {
    const { edge, runId, token, runnerId, claimTimeoutMs, log } = this.options;
    return new Promise<boolean>((resolve) => {
      let claimed = false;
      const current = () => this.state.kind !== "closed" && "socket" in this.state && this.state.socket === socket;
      const socket = connectSocket(edge, runId, token, {
        onOpen: () => {
          const hello: HelloFrame = { type: "hello", runnerId, lastSourceSeq: this.host.lastSourceSeq() };
          if (this.held !== null) hello.epoch = this.held;
          if (this.generation !== undefined) hello.generation = this.generation;
          // Until its first claim; an attach on the same directory later is an ordinary takeover.
          if (this.options.resume === true && this.held === null) hello.resume = true;
          socket.send(encodeRunnerFrame(hello));
        },
        onMessage: (text) => {
          if (!current()) return;
          const parsed = parseServerFrame(text);
          if (!parsed.ok) return log.warn(`ignoring frame from the edge: ${parsed.message}`);
          const frame = parsed.value;
          if (frame.type !== "claimed") return this.host.frame(frame);
          claimed = true;
          this.onClaimed(socket, frame);
        },
        onClose: (code, reason) => {
          if (current()) this.leave({ kind: "waiting" });
          if (code === CLOSE_FENCED) this.end({ kind: "fenced", detail: closeDetail(code, reason) });
          else if (code === CLOSE_REJECTED) {
            this.end({ kind: "run-over", detail: `was ended by the edge (${closeDetail(code, reason)})` });
          }
          resolve(claimed);
        },
      });
      const claimTimer = setTimeout(() => {
        if (this.state.kind !== "connecting" || this.state.socket !== socket) return;
        log.warn(`no claim within ${claimTimeoutMs} ms; dropping the connection`);
        socket.close();
      }, claimTimeoutMs);
      this.state = { kind: "connecting", socket, claimTimer };
    });
  }

  private onClaimed(socket: Socket, frame: ClaimedFrame): void {
    const epoch = frame.epoch;
    const every = Math.max(50, Math.floor(frame.heartbeatMs / 3));
    const heartbeat = setInterval(() => this.send({ type: "heartbeat", epoch }), every);
    this.leave({ kind: "claimed", socket, epoch, heartbeat });
    this.held = epoch;
    this.generation = frame.generation;
    this.host.claimed(frame);
  }
}

function closeDetail(code: number, reason: string): string {
  return `connection closed with ${code}${reason ? ` (${reason})` : ""}`;
}

/** Full-jitter exponential backoff: a delay between min/2 and min·2^attempt (at most max). */
export function backoffDelay(attempt: number, minMs: number, maxMs: number, random = Math.random): number {
  const cap = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 20));
  return Math.round(minMs / 2 + random() * (cap - minMs / 2));
}
