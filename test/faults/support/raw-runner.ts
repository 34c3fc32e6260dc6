import { waitFor } from "../../support/wait.ts";
import { bearerSocket } from "../../support/bearer-socket.ts";

type Frame = { type: string; [key: string]: unknown };

/**
 * A bare runner socket for runs whose deadlines a test wants to see fire: it says `hello`, sends
 * what it is told and never reconnects, so once the edge dies the run is left to its alarms.
 */
export class RawRunner {
  readonly frames: Frame[] = [];
  /** The `claimed` frame its `hello` got. */
  claimed: Frame = { type: "none" };
  private readonly ws: WebSocket;
  private closed = false;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.addEventListener("message", (m) => this.frames.push(JSON.parse(String(m.data))));
    ws.addEventListener("close", () => (this.closed = true));
    ws.addEventListener("error", () => (this.closed = true));
  }

  /** Connects and claims the run. */
  static async claim(base: string, runId: string, token: string, runnerId: string): Promise<RawRunner> {
    const url = `${base.replace(/^http/, "ws")}/v1/runs/${runId}/runner`;
    const runner = new RawRunner(bearerSocket(url, token));
    await waitFor(`raw runner ${runnerId} to open its socket`, () => runner.ws.readyState === WebSocket.OPEN, 10_000);
    runner.send({ type: "hello", runnerId });
    runner.claimed = await runner.next("claimed");
    return runner;
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }

  async next(type: string, timeoutMs = 10_000): Promise<Frame> {
    return waitFor(
      `a ${type} frame on the raw runner socket (got ${JSON.stringify(this.frames.map((f) => f.type))}, closed=${this.closed})`,
      () => {
        const at = this.frames.findIndex((f) => f.type === type);
        return at >= 0 ? this.frames.splice(at, 1)[0] : null;
      },
      timeoutMs,
    );
  }

  close(): void {
    this.ws.close();
  }
}
