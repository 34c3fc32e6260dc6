/** A small runner over the runner WebSocket, so tests decide exactly which events a run gets. */
import type { RunnerOutcome } from "../../../src/protocol/index.ts";
import type { AgentEvent } from "../../support/runner-client.ts";
import { waitFor } from "../../support/wait.ts";
import { bearerSocket } from "../../support/bearer-socket.ts";

export type { AgentEvent };

type Frame = Record<string, unknown> & { type: string };

export class TestRunner {
  private readonly url: string;
  private readonly runId: string;
  private readonly token: string;
  private ws: WebSocket | null = null;
  private frames: Frame[] = [];
  /** Commands handed over in `claimed`, before any that arrive as frames. */
  private claimedCommands: Frame[] = [];
  /** No claimed socket: nothing to heartbeat. */
  private closed = true;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  epoch = 0;
  sent = 0;

  constructor(url: string, runId: string, token: string) {
    this.url = url;
    this.runId = runId;
    this.token = token;
  }

  /** Opens the socket and claims the run (again, after a drop: with the epoch it held). */
  async claim(): Promise<void> {
    const ws = bearerSocket(`${this.url.replace(/^http/, "ws")}/v1/runs/${this.runId}/runner`, this.token);
    this.ws = ws;
    this.closed = true;
    this.frames = [];
    let failed = false;
    // Events from a socket this runner has since replaced are ignored.
    ws.addEventListener("message", (ev) => {
      if (this.ws === ws) this.frames.push(JSON.parse(String(ev.data)) as Frame);
    });
    ws.addEventListener("close", () => {
      if (this.ws === ws) this.closed = true;
    });
    ws.addEventListener("error", () => (failed = true));
    await waitFor(`runner socket for ${this.runId} to open`, () => {
      if (failed) throw new Error("runner socket failed to open");
      return ws.readyState === WebSocket.OPEN;
    });
    const hello: Record<string, unknown> = { type: "hello", runnerId: "test-runner", lastSourceSeq: this.sent };
    if (this.epoch > 0) hello.epoch = this.epoch;
    ws.send(JSON.stringify(hello));
    const claimed = await this.next("claimed");
    this.epoch = claimed.epoch as number;
    this.claimedCommands = [...(claimed.commands as Frame[])];
    this.closed = false; // heartbeats only now, with the new epoch
    this.heartbeat ??= setInterval(() => {
      if (!this.closed) this.ws?.send(JSON.stringify({ type: "heartbeat", epoch: this.epoch }));
    }, 5000);
  }

  /** Sends events with the next sourceSeqs and waits until the edge has stored them. */
  async emit(events: AgentEvent[]): Promise<void> {
    const batch = events.map((e, i) => ({ sourceSeq: this.sent + i + 1, type: e.type, data: e.data ?? {} }));
    this.ws?.send(JSON.stringify({ type: "events", epoch: this.epoch, events: batch }));
    const target = this.sent + batch.length;
    const ack = await this.next("ack");
    if ((ack.highestSourceSeq as number) !== target) throw new Error(`ack ${JSON.stringify(ack)}, expected ${target}`);
    this.sent = target;
  }

  async complete(outcome: RunnerOutcome): Promise<void> {
    this.ws?.send(JSON.stringify({ type: "complete", epoch: this.epoch, outcome }));
    await this.next("completed");
    this.close();
  }

  /** The next command frame the edge delivers. */
  async command(): Promise<Frame> {
    return this.claimedCommands.shift() ?? this.next("command");
  }

  async ack(command: Frame, state: "applied" | "rejected"): Promise<void> {
    const { controllerSeq, commandId } = command;
    this.ws?.send(JSON.stringify({ type: "commandAck", epoch: this.epoch, controllerSeq, commandId, state }));
  }

  /** Waits for the socket to drop (the server went away). */
  async dropped(): Promise<void> {
    await waitFor(`runner socket of ${this.runId} to drop`, () => this.closed, 30_000);
  }

  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.ws?.close();
  }

  /** The next frame of this type; commands arriving meanwhile stay queued for command(). */
  private async next(type: string): Promise<Frame> {
    return waitFor(`a ${type} frame on the runner socket of ${this.runId}`, () => {
      const index = this.frames.findIndex((f) => f.type === type);
      if (index === -1) {
        const refusal = this.frames.find((f) => f.type === "error" || f.type === "fenced" || f.type === "rejected");
        if (refusal) throw new Error(`runner got ${JSON.stringify(refusal)}`);
        return null;
      }
      return this.frames.splice(index, 1)[0] as Frame;
    });
  }
}
