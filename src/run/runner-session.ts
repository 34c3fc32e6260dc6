import { CLOSE_FENCED, CLOSE_REJECTED, isFailure, type RunnerFrame } from "../protocol/index.ts";
import { commandFrame } from "./command-store.ts";
import type { RunHost } from "./host.ts";
import { attachmentOf, closeSocket, send } from "./sockets.ts";

/** Handles one validated frame from a runner socket. */
export async function handleRunnerFrame(host: RunHost, ws: WebSocket, frame: RunnerFrame): Promise<void> {
  const attachment = attachmentOf(ws);
  if (attachment?.role !== "runner") return;
  if (frame.type === "hello") return hello(host, ws, frame.runnerId, frame.epoch);
  if (attachment.epoch === 0) {
    send(ws, { type: "error", code: "not_claimed", message: "send hello before anything else" });
    return;
  }
  if (frame.epoch !== attachment.epoch) return fence(host, ws);

  switch (frame.type) {
    case "events": {
      const result = await host.operate((m) => m.appendBatch(frame.epoch, frame.events));
      if (isFailure(result)) return send(ws, { type: "error", code: result.code, message: result.message });
      if (result.kind === "stale_epoch") return fence(host, ws, result.epoch);
      if (result.kind === "terminal") {
        return send(ws, {
          type: "error",
          code: "terminal_run",
          message: `run is ${result.status}; nothing more is stored`,
        });
      }
      const stop = result.stoppedAt;
      if (stop?.kind === "gap") send(ws, { type: "gap", expected: stop.expected });
      if (stop?.kind === "conflict") send(ws, { type: "conflict", sourceSeq: stop.sourceSeq });
      return send(ws, { type: "ack", highestSourceSeq: result.highestSourceSeq });
    }
    case "heartbeat": {
      const result = await host.operate((m) => m.heartbeat(frame.epoch));
      if (!isFailure(result) && result.kind === "stale_epoch") return fence(host, ws, result.epoch);
      return;
    }
    case "complete": {
      const result = await host.operate((m) => m.complete(frame.epoch, frame.outcome));
      if (isFailure(result)) return send(ws, { type: "error", code: result.code, message: result.message });
      if (result.kind === "stale_epoch") return fence(host, ws, result.epoch);
      return send(ws, { type: "completed", status: result.status });
    }
    case "commandAck": {
      const result = await host.operate((m) =>
        m.ackCommand(frame.epoch, frame.controllerSeq, frame.commandId, frame.state),
      );
      if (isFailure(result)) return send(ws, { type: "error", code: result.code, message: result.message });
      if (result.kind === "stale_epoch") return fence(host, ws, result.epoch);
      return;
    }
  }
}

async function hello(host: RunHost, ws: WebSocket, runnerId: string, heldEpoch: number | undefined): Promise<void> {
  const result = await host.operate((m) => m.claim(runnerId, heldEpoch));
  if (isFailure(result)) return send(ws, { type: "error", code: result.code, message: result.message });
  if (result.kind === "stale_epoch") return fence(host, ws, result.epoch);
  if (result.kind === "rejected") {
    send(ws, { type: "rejected", reason: "terminal-run", status: result.status });
    return closeSocket(ws, CLOSE_REJECTED, "run is terminal");
  }
  ws.serializeAttachment({ role: "runner", epoch: result.epoch, runnerId });
  host.sockets.fenceAllBut(ws, result.epoch);
  send(ws, {
    type: "claimed",
    epoch: result.epoch,
    ackedSourceSeq: result.ackedSourceSeq,
    heartbeatMs: result.heartbeatMs,
    commands: result.commands.map(commandFrame),
  });
}

/** A superseded runner: tell it the current epoch and drop it. Nothing it sent was stored. */
async function fence(host: RunHost, ws: WebSocket, epoch?: number): Promise<void> {
  const current = epoch ?? (await host.operate((m) => m.mustLoad().epoch));
  send(ws, { type: "fenced", epoch: isFailure(current) ? 0 : current });
  closeSocket(ws, CLOSE_FENCED, "fenced by a newer claim");
}
