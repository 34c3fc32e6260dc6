import {
  CLOSE_FENCED,
  CLOSE_REJECTED,
  CLOSE_TRY_AGAIN,
  ok,
  type RejectReason,
  type RunnerFrame,
} from "../../protocol/index.ts";
import { claimRun, type Hello } from "../claim.ts";
import { commandFrame } from "../command-store.ts";
import type { RunHost } from "../host.ts";
import { closeSocket, send, sendFailure } from "./run-sockets.ts";
import { ackCommand, completeRun, heartbeat, storeBatch } from "../runner-actions.ts";

/**
 * Handles one validated frame from a runner socket. `claimed` is the epoch this socket's `hello`
 * claimed (0 before it) and the generation it serves.
 */
export async function handleRunnerFrame(
  host: RunHost,
  ws: WebSocket,
  claimed: { epoch: number; generation: number },
  frame: RunnerFrame,
): Promise<void> {
  if (frame.type === "hello") {
    const { runnerId, epoch, generation, resume } = frame;
    return hello(host, ws, { runnerId, heldEpoch: epoch, generation, resume: resume === true });
  }
  if (claimed.epoch === 0) {
    return send(ws, { type: "error", code: "not_claimed", message: "send hello before anything else" });
  }
  if (frame.epoch !== claimed.epoch) return fence(host, ws);

  switch (frame.type) {
    case "events": {
      // A frame of another generation than the one this runner claimed is never stored.
      if ((frame.generation ?? 1) !== claimed.generation) return fence(host, ws);
      const result = await host.operate((m) => ok(storeBatch(m, frame.epoch, claimed.generation, frame.events)));
      if (!result.ok) return sendFailure(ws, result);
      const verdict = result.value;
      if (verdict.kind === "fenced") return fence(host, ws, verdict.epoch);
      // The runner was told (an error frame, then `rejected`) as the run failed.
      if (verdict.kind === "quota_exceeded" || verdict.kind === "budget_exceeded") return;
      if (verdict.kind === "terminal") {
        return send(ws, {
          type: "error",
          code: "terminal_run",
          message: `run is ${verdict.status}; nothing more is stored`,
        });
      }
      const stop = verdict.stoppedAt;
      if (stop?.kind === "gap") send(ws, { type: "gap", expected: stop.expected });
      if (stop?.kind === "conflict") send(ws, { type: "conflict", sourceSeq: stop.sourceSeq });
      return send(ws, { type: "ack", highestSourceSeq: verdict.highestSourceSeq });
    }
    case "heartbeat": {
      const result = await host.operate((m) => ok(heartbeat(m, frame.epoch)));
      if (result.ok && result.value.kind === "fenced") return fence(host, ws, result.value.epoch);
      return;
    }
    case "complete": {
      const result = await host.operate((m) => completeRun(m, frame.epoch, frame.outcome));
      if (!result.ok) return sendFailure(ws, result);
      if (result.value.kind === "fenced") return fence(host, ws, result.value.epoch);
      return send(ws, { type: "completed", status: result.value.status });
    }
    case "commandAck": {
      const result = await host.operate((m) => ackCommand(m, frame.epoch, frame));
      if (!result.ok) return sendFailure(ws, result);
      if (result.value.kind === "fenced") return fence(host, ws, result.value.epoch);
      return;
    }
  }
}

const REJECTED_BECAUSE: Record<RejectReason, string> = {
  "terminal-run": "run is terminal",
  recovering: "run is recovering; this claim does not match its mode",
  "not-resumable": "run has no such generation to start",
};

async function hello(host: RunHost, ws: WebSocket, claimant: Hello): Promise<void> {
  const result = await host.operate((m) => ok(claimRun(m, claimant)));
  if (!result.ok) return sendFailure(ws, result);
  const verdict = result.value;
  if (verdict.kind === "fenced") return fence(host, ws, verdict.epoch);
  if (verdict.kind === "rate_limited") {
    const message = `run claimed faster than ${host.limits.claimsPerMinute} times a minute (CLAIMS_PER_MINUTE); try again later`;
    send(ws, { type: "error", code: "rate_limited", message });
    return closeSocket(ws, CLOSE_TRY_AGAIN, "claim rate exceeded; try again later");
  }
  if (verdict.kind === "rejected") {
    const mode = verdict.mode === undefined ? {} : { mode: verdict.mode };
    send(ws, { type: "rejected", reason: verdict.reason, status: verdict.status, ...mode });
    return closeSocket(ws, CLOSE_REJECTED, REJECTED_BECAUSE[verdict.reason]);
  }
  host.sockets.setRunnerClaim(ws, verdict.epoch, verdict.generation);
  host.sockets.fenceAllBut(ws, verdict.epoch);
  send(ws, {
    type: "claimed",
    epoch: verdict.epoch,
    ackedSourceSeq: verdict.ackedSourceSeq,
    generation: verdict.generation,
    heartbeatMs: verdict.heartbeatMs,
    commands: verdict.commands.map((command) => commandFrame(command, verdict.generation)),
  });
}

/** A superseded runner: tell it the current epoch and drop it. Nothing it sent was stored. */
function fence(host: RunHost, ws: WebSocket, epoch: number = currentEpoch(host)): void {
  send(ws, { type: "fenced", epoch });
  closeSocket(ws, CLOSE_FENCED, "fenced by a newer claim");
}

function currentEpoch(host: RunHost): number {
  const epoch = host.read((m) => m.mustLoad().epoch);
  return epoch.ok ? epoch.value : 0;
}
