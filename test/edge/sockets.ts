import { call } from "./helpers.ts";

type Frame = { type: string; [key: string]: any };

/**
 * A test-side WebSocket that queues every frame it receives. Every wait is bounded and, when
 * it runs out, fails naming the frame that never came and listing what did.
 */
export class SocketProbe {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | null = null;
  private wake: (() => void) | null = null;

  readonly ws: WebSocket;

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.addEventListener("message", (event) => {
      this.frames.push(
        JSON.parse(typeof event.data === "string" ? event.data : new TextDecoder().decode(event.data as ArrayBuffer)),
      );
      this.wake?.();
    });
    ws.addEventListener("close", (event) => {
      this.closed = { code: event.code, reason: event.reason };
      this.wake?.();
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** Removes and returns the first queued frame of `type` (or of any of several), matching `where`. */
  async next(
    type: string | string[],
    where: (frame: Frame) => boolean = () => true,
    timeoutMs = 5_000,
  ): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    const types = Array.isArray(type) ? type : [type];
    for (;;) {
      const index = this.frames.findIndex((f) => types.includes(f.type) && where(f));
      if (index >= 0) return this.frames.splice(index, 1)[0] as Frame;
      const left = deadline - Date.now();
      if (left <= 0 || (this.closed && this.frames.length === 0)) {
        throw new Error(
          `no "${type}" frame within ${timeoutMs} ms; received ${JSON.stringify(this.frames.map((f) => f.type))}, closed=${JSON.stringify(this.closed)}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  async waitClosed(timeoutMs = 5_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `socket not closed within ${timeoutMs} ms; frames ${JSON.stringify(this.frames.map((f) => f.type))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.closed;
  }

  /** A round trip proves the object has handled everything sent before it. */
  async settle(): Promise<void> {
    this.send("not json");
    await this.next("error", (f) => f.code === "invalid_json");
  }

  close(): void {
    try {
      this.ws.close(1000, "test done");
    } catch {
      // already closed
    }
  }
}

/** The role a run token claims, read without checking it (tests only). */
export function tokenRole(token: string): string | undefined {
  const body = token.split(".")[1] ?? "";
  try {
    return (JSON.parse(atob(body.replaceAll("-", "+").replaceAll("_", "/"))) as { role?: string }).role;
  } catch {
    return undefined;
  }
}

/**
 * Opens a socket as a client would: a viewer token in `?token=` (what a browser has), any other
 * credential in the Authorization header (the only place the edge takes it).
 */
export async function openSocket(path: string, token: string | null, key: string | null = null): Promise<SocketProbe> {
  const inQuery = token !== null && tokenRole(token) === "viewer";
  const url = inQuery ? `${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}` : path;
  const response = await call(url, { headers: { upgrade: "websocket" }, key: inQuery ? key : (token ?? key) });
  const ws = response.webSocket;
  if (!ws)
    throw new Error(`expected a WebSocket upgrade for ${path}, got HTTP ${response.status}: ${await response.text()}`);
  const probe = new SocketProbe(ws);
  ws.accept();
  return probe;
}

export async function connectRunner(runId: string, runnerToken: string): Promise<SocketProbe> {
  return openSocket(`/v1/runs/${runId}/runner`, runnerToken);
}

/** Connects and claims; returns the socket and the claimed frame. */
export async function claim(runId: string, runnerToken: string, runnerId = "runner-1") {
  const runner = await connectRunner(runId, runnerToken);
  runner.send({ type: "hello", runnerId });
  const claimed = await runner.next("claimed");
  return { runner, claimed, epoch: claimed.epoch as number };
}

export async function watch(
  runId: string,
  token: string | null,
  after = 0,
  key: string | null = null,
): Promise<SocketProbe> {
  return openSocket(`/v1/runs/${runId}/watch?after=${after}`, token, key);
}

export function agentEvent(
  sourceSeq: number,
  type = "TEXT_MESSAGE_CONTENT",
  data: unknown = { delta: `chunk ${sourceSeq}` },
) {
  return { sourceSeq, type, data };
}
