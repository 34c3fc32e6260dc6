import type { WebhookHost } from "./webhook-notices.ts";
import type { PoolRunHost } from "./pool-run.ts";
import { ControlEventType } from "../protocol/index.ts";
import { notifyWebhooks } from "./webhook-notices.ts";
import type { RecoveryMode, RejectReason } from "../protocol/index.ts";
import type { Hello } from "./claim.ts";
import { applyRecoveryPolicy } from "./pool-run.ts";
import type { RunMachine } from "./run-machine.ts";
import type { RunRow } from "./store.ts";

/** What entering, leaving and lapsing recovery need. */
export type RecoveryHost = Pick<
  RunMachine,
  | "approvals"
  | "checkpoints"
  | "control"
  | "deadlines"
  | "log"
  | "mustLoad"
  | "now"
  | "retireCommandsBefore"
  | "setRecovery"
  | "setStatus"
  | "terminalize"
> &
  WebhookHost &
  PoolRunHost;

// A run whose runner and its sandbox are gone: which recovery the evidence allows, entering and
// leaving `recovering`, and which claims it takes meanwhile. Operators' decisions are in
// recovery-decision.ts. The rules are docs/PROTOCOL.md's "Recovery".

/** The recovery mode the run's evidence allows, and why. */
export function recoveryMode(machine: RecoveryHost, run: RunRow): { mode: RecoveryMode; reason: string } {
  const checkpoint = machine.checkpoints.current();
  const anyEvents = machine.log.hasRunnerEvents();
  if (run.nativeSession === null && !anyEvents) {
    return {
      mode: "restart",
      reason: "no agent session was reported and no runner event stored: starting over is safe",
    };
  }
  const ambiguous = (reason: string) => ({ mode: "ambiguous" as const, reason });
  if (run.nativeSession === null) return ambiguous("runner events were stored but no agent session was reported");
  if (checkpoint === null) return ambiguous("the agent session has no checkpoint");
  if (checkpoint.generation !== run.generation) {
    return ambiguous(`the checkpoint is of generation ${checkpoint.generation}; the run is at ${run.generation}`);
  }
  if (checkpoint.sourceSeq < run.highestSourceSeq) {
    return ambiguous(
      `events after the checkpoint: it covers sourceSeq ${checkpoint.sourceSeq}, ${run.highestSourceSeq} are stored`,
    );
  }
  return { mode: "resume", reason: "the checkpoint covers every stored event of the agent session" };
}

/** The takeover window passed with no runner: the run waits for recovery, up to recoverMs. */
export function enterRecovery(machine: RecoveryHost, run: RunRow): void {
  const { mode, reason } = recoveryMode(machine, run);
  const deadline = machine.now + run.timeouts.recoverMs;
  machine.setRecovery({ mode, reason, since: machine.now, deadline }, true);
  machine.setStatus("recovering");
  machine.deadlines.disarmLease();
  machine.deadlines.armRecover(deadline);
  machine.control(run.epoch, ControlEventType.RUN_RECOVERING, { mode, reason, generation: run.generation });
  notifyWebhooks(machine, "run.recovering", String(machine.mustLoad().recoveryEpisode));
  applyRecoveryPolicy(machine, mode, reason);
}

/** The recover deadline passed with nobody recovering the run. */
export function recoveryLapsed(machine: RecoveryHost, run: RunRow): void {
  if (run.status !== "recovering") return;
  machine.terminalize(
    {
      status: "failed",
      error: { code: "runner_lost", message: `no runner recovered the run within ${run.timeouts.recoverMs} ms` },
    },
    true,
  );
}

/** What a `hello` may claim: the generation it would serve, and whether that starts it. */
export type ClaimTarget =
  | { kind: "claim"; generation: number; start: "resume" | "restart" | null }
  | { kind: "rejected"; reason: RejectReason; mode?: RecoveryMode };

/**
 * Outside recovery a hello claims the current generation and may not name a later one; a resume
 * hello that never held a claim (no epoch) claims only when the newest claim is already its own
 * (same runnerId, its `claimed` lost in a cut): another resume of a generation already resumed
 * would otherwise take it over and replay its events. While
 * recovering: `restart` takes a hello without a generation (a fresh generation when the lost one
 * stored anything, else the same one from scratch); `resume` takes only a hello naming the next
 * generation; `ambiguous` takes none until an operator decides. (Older generations are fenced
 * before this is asked.)
 */
export function claimTarget(machine: RecoveryHost, run: RunRow, hello: Hello): ClaimTarget {
  const current = run.generation;
  const asked = hello.generation;
  if (run.status !== "recovering" || run.recovery === null) {
    if (asked !== undefined && asked > current) return { kind: "rejected", reason: "not-resumable" };
    if (hello.resume === true && hello.heldEpoch === undefined && hello.runnerId !== run.runnerId) {
      return { kind: "rejected", reason: "not-resumable" };
    }
    return { kind: "claim", generation: current, start: null };
  }
  const mode = run.recovery.mode;
  if (mode === "restart" && asked === undefined) {
    const generation = machine.log.hasRunnerEvents() ? current + 1 : current;
    return { kind: "claim", generation, start: "restart" };
  }
  if (mode === "resume" && asked === current + 1) return { kind: "claim", generation: asked, start: "resume" };
  return { kind: "rejected", reason: "recovering", mode };
}

/**
 * A recovering run is claimed: recovery ends, and when the claim starts a new generation the old
 * one's pending approvals expire (`generation_replaced`) and its unconfirmed commands become
 * `unknown`, never sent to the new one. Runs after the claim took its epoch.
 */
export function leaveRecovery(
  machine: RecoveryHost,
  before: RunRow,
  target: { generation: number; start: "resume" | "restart" },
  epoch: number,
): void {
  machine.setRecovery(null);
  machine.deadlines.disarmRecover();
  if (target.generation === before.generation) return;
  const { generation } = target;
  machine.control(epoch, ControlEventType.RUN_GENERATION_STARTED, {
    generation,
    previous: before.generation,
    mode: target.start,
    nativeSession: target.start === "resume" ? before.nativeSession : null,
  });
  machine.retireCommandsBefore(generation);
  machine.approvals.expireOlderGenerations(generation, epoch);
}
