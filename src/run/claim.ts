import type { RecoveryHost } from "./recovery.ts";
import type { QuotaHost } from "./quota.ts";
import type { PoolRunHost } from "./pool-run.ts";
import {
  type CommandRecord,
  type Fenced,
  fenced,
  ControlEventType,
  isTerminal,
  type RecoveryMode,
  type RejectReason,
  type RunStatus,
} from "../protocol/index.ts";
import { notifyDispatcher } from "./pool-run.ts";
import { exceedQuota } from "./quota.ts";
import { claimTarget, leaveRecovery } from "./recovery.ts";
import type { RunMachine } from "./run-machine.ts";

/** What a claim needs. */
export type ClaimHost = Pick<
  RunMachine,
  | "approvals"
  | "control"
  | "deadlines"
  | "handOverCommands"
  | "limits"
  | "log"
  | "markUnconfirmedCommandsUnknown"
  | "mustLoad"
  | "now"
  | "setStatus"
  | "spendClaimAllowance"
  | "takeClaim"
> &
  RecoveryHost &
  QuotaHost &
  PoolRunHost;

/** What a runner's `hello` gets. */
export type ClaimVerdict =
  | {
      kind: "claimed";
      epoch: number;
      generation: number;
      ackedSourceSeq: number;
      heartbeatMs: number;
      commands: CommandRecord[];
    }
  /** No claim, epoch unchanged: the run is terminal, or recovering in a way this hello does not match. */
  | { kind: "rejected"; reason: RejectReason; status: RunStatus; mode?: RecoveryMode }
  /** Another runner claimed since the epoch this one held, or it serves an older generation. */
  | Fenced
  /** The claim allowance (CLAIMS_PER_MINUTE) is used up: nothing changed; try again later. */
  | { kind: "rate_limited" };

export interface Hello {
  runnerId: string;
  /** The epoch the runner held before it reconnected; absent on its first connection. */
  heldEpoch?: number | undefined;
  /** The generation it serves; absent: the current one (or a restart's). */
  generation?: number | undefined;
  /** It starts that generation from a restored checkpoint (`runner-bridge resume`). */
  resume?: boolean | undefined;
}

/**
 * Claims the run for the runner that said `hello`: the claim epoch is incremented (ClaimEpoch,
 * through the store), commands delivered to the previous holder and never acked become `unknown`,
 * the lease and idle deadlines start, and everything not yet acked is handed to the new holder.
 * A recovering run is claimed only as its recovery mode allows (recovery.ts), which may start a
 * new generation.
 *
 * A runner reconnecting with the epoch it held is fenced when a newer claim exists, unless that
 * claim is its own (same runnerId): the edge commits a claim before it sends `claimed`, so a
 * connection cut in between leaves the runner holding the old epoch while the newest claim is
 * already its. The same claimant gets a fresh claim instead of being fenced by its own lost one.
 */
export function claimRun(machine: ClaimHost, hello: Hello): ClaimVerdict {
  const run = machine.mustLoad();
  if (isTerminal(run.status)) return { kind: "rejected", reason: "terminal-run", status: run.status };
  const newerClaim = hello.heldEpoch !== undefined && hello.heldEpoch < run.epoch;
  if (newerClaim && run.runnerId !== hello.runnerId) {
    return fenced(run.epoch, `epoch ${hello.heldEpoch} was superseded by a newer claim (epoch ${run.epoch})`);
  }
  if (hello.generation !== undefined && hello.generation < run.generation) {
    return fenced(run.epoch, `generation ${hello.generation} was replaced by generation ${run.generation}`);
  }
  const target = claimTarget(machine, run, hello);
  if (target.kind === "rejected") {
    const mode = target.mode === undefined ? {} : { mode: target.mode };
    return { kind: "rejected", reason: target.reason, status: run.status, ...mode };
  }
  const now = machine.now;
  // Each claim appends run.claimed: a log already at its quota ends the run instead.
  if (machine.log.logBytes() >= machine.limits.logBytes) {
    exceedQuota(machine);
    return { kind: "rejected", reason: "terminal-run", status: "failed" };
  }
  if (!machine.spendClaimAllowance()) return { kind: "rate_limited" };
  const { generation } = target;
  const epoch = machine.takeClaim(hello.runnerId, generation);
  const unknown = machine.markUnconfirmedCommandsUnknown();
  if (target.start !== null) leaveRecovery(machine, run, { generation, start: target.start }, epoch);
  machine.setStatus(machine.approvals.pendingCount() > 0 ? "waiting" : "running");
  machine.deadlines.disarmClaim();
  machine.deadlines.disarmTakeover();
  machine.deadlines.armLease(now + run.timeouts.heartbeatMs);
  machine.deadlines.armIdle(now + run.timeouts.idleMs);
  machine.control(epoch, ControlEventType.RUN_CLAIMED, {
    epoch,
    runnerId: hello.runnerId,
    previousEpoch: run.epoch,
    unknownCommands: unknown,
    generation,
  });
  notifyDispatcher(machine, "claimed", { generation });
  const commands = machine.handOverCommands(epoch, generation);
  return {
    kind: "claimed",
    epoch,
    generation,
    ackedSourceSeq: machine.log.runnerState(generation)?.lastSeq ?? 0,
    heartbeatMs: run.timeouts.heartbeatMs,
    commands,
  };
}
