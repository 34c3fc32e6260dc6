import type { CommandFrame, RunnerOutcome, ServerToRunner } from "../../src/protocol/index.ts";
import { waitFor } from "./wait.ts";
import { bearerSocket } from "./bearer-socket.ts";

export interface AgentEvent {
  type: string;
  data?: unknown;
}

/**
 * A minimal runner over the real runner WebSocket: claims the run, sends events in batches and
 * waits for each ack, answers commands as `applied` (when asked to), completes. It speaks only
 * the protocol of docs/PROTOCOL.md, so tests can feed a run exactly the events they compare.
 */
export class TestRunner {
  readonly frames: ServerToRunner[] = [];
  readonly commands: CommandFrame[] = [];
  epoch = 0;
  /** The highest sourceSeq the edge acknowledged. */
  acked = 0;
  private nextSourceSeq = 1;
  private closed = false;
  private readonly socket: WebSocket;
  private readonly autoAck: boolean;

  private constructor(socket: WebSocket, autoAck: boolean) {
    this.socket = socket;
    this.autoAck = autoAck;
    socket.addEventListener("message", (message) => {
      const frame = JSON.parse(String(message.data)) as ServerToRunner;
      this.frames.push(frame);
      if (frame.type === "command") {
        this.commands.push(frame);
        if (this.autoAck) this.ack(frame, "applied");
      }
    });
    socket.addEventListener("close", () => {
      this.closed = true;
    });
  }

  /** Connects and claims the run; `heldEpoch` when reconnecting after a cut. */
  static async connect(
    base: string,
    runId: string,
    token: string,
    options: { runnerId?: string; heldEpoch?: number; autoAck?: boolean } = {},
  ): Promise<TestRunner> {
    const socket = bearerSocket(`${base.replace(/^http/, "ws")}/v1/runs/${runId}/runner`, token);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve(), { once: true });
      socket.addEventListener("error", () => reject(new Error(`runner socket to ${runId} did not open`)), {
        once: true,
      });
    });
    const runner = new TestRunner(socket, options.autoAck ?? true);
    const hello: Record<string, unknown> = {
      type: "hello",
      runnerId: options.runnerId ?? "console-test-runner",
      lastSourceSeq: 0,
    };
    if (options.heldEpoch !== undefined) hello.epoch = options.heldEpoch;
    socket.send(JSON.stringify(hello));
    const claimed = await runner.next("claimed");
    runner.epoch = claimed.epoch;
    runner.acked = claimed.ackedSourceSeq;
    runner.nextSourceSeq = claimed.ackedSourceSeq + 1;
    return runner;
  }

  /** Removes and returns the first frame of this type, waiting (bounded) for it. */
  async next<T extends ServerToRunner["type"]>(
    type: T,
    timeoutMs = 30_000,
  ): Promise<Extract<ServerToRunner, { type: T }>> {
    return waitFor(
      `a "${type}" frame on the runner socket (got ${JSON.stringify(this.frames.map((f) => f.type))})`,
      () => {
        const index = this.frames.findIndex((frame) => frame.type === type);
        if (index < 0) return undefined;
        return this.frames.splice(index, 1)[0] as Extract<ServerToRunner, { type: T }>;
      },
      timeoutMs,
      10,
    );
  }

  /** Sends events in batches of at most `batch`, each acknowledged before the next. */
  async send(events: readonly AgentEvent[], batch = 500): Promise<void> {
    for (let i = 0; i < events.length; i += batch) {
      const slice = events.slice(i, i + batch).map((event) => ({ sourceSeq: this.nextSourceSeq++, ...event }));
      this.socket.send(JSON.stringify({ type: "events", epoch: this.epoch, events: slice }));
      const last = slice[slice.length - 1]?.sourceSeq ?? 0;
      const ack = await this.next("ack", 120_000);
      if (ack.highestSourceSeq !== last) {
        throw new Error(`edge acked ${ack.highestSourceSeq}, expected ${last}: ${JSON.stringify(this.frames)}`);
      }
      this.acked = ack.highestSourceSeq;
    }
  }

  ack(command: CommandFrame, state: "delivered" | "applied" | "rejected"): void {
    this.socket.send(
      JSON.stringify({
        type: "commandAck",
        epoch: this.epoch,
        controllerSeq: command.controllerSeq,
        commandId: command.commandId,
        state,
      }),
    );
  }

  async complete(outcome: RunnerOutcome): Promise<void> {
    this.socket.send(JSON.stringify({ type: "complete", epoch: this.epoch, outcome }));
    await this.next("completed");
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    if (!this.closed) this.socket.close();
  }
}
