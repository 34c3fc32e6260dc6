import { type CommandRecord, isTerminal, type RunStatus } from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";

/** What a runner's `hello` gets. */
export type ClaimVerdict =
  | { kind: "claimed"; epoch: number; ackedSourceSeq: number; heartbeatMs: number; commands: CommandRecord[] }
  /** The run is terminal: no claim, epoch unchanged. */
  | { kind: "rejected"; status: RunStatus }
  /** Another runner claimed since the epoch this one held. */
  | { kind: "fenced"; epoch: number };

export interface Hello {
  runnerId: string;
  /** The epoch the runner held before it reconnected; absent on its first connection. */
  heldEpoch?: number | undefined;
}

/**
 * Claims the run for the runner that said `hello`: the claim epoch is incremented (ClaimEpoch,
 * through the store), commands delivered to the previous holder and never acked become `unknown`,
 * the lease and idle deadlines start, and everything not yet acked is handed to the new holder.
 *
 * A runner reconnecting with the epoch it held is fenced when a newer claim exists, unless that
 * claim is its own (same runnerId): the edge commits a claim before it sends `claimed`, so a
 * connection cut in between leaves the runner holding the old epoch while the newest claim is
 * already its. The same claimant gets a fresh claim instead of being fenced by its own lost one.
 */
export function claimRun(machine: RunMachine, hello: Hello): ClaimVerdict {
  const run = machine.mustLoad();
  if (isTerminal(run.status)) return { kind: "rejected", status: run.status };
  const newerClaim = hello.heldEpoch !== undefined && hello.heldEpoch < run.epoch;
  if (newerClaim && run.runnerId !== hello.runnerId) return { kind: "fenced", epoch: run.epoch };
  const now = machine.now;
  const epoch = machine.store.claim(hello.runnerId, now);
  const unknown = machine.commands.markUnconfirmedUnknown(now);
  machine.setStatus(machine.approvals.pending().length > 0 ? "waiting" : "running");
  machine.timers.clear("claim");
  machine.timers.clear("takeover");
  machine.timers.set("lease", now + run.timeouts.heartbeatMs);
  machine.timers.set("idle", now + run.timeouts.idleMs);
  machine.control(epoch, "run.claimed", {
    epoch,
    runnerId: hello.runnerId,
    previousEpoch: run.epoch,
    unknownCommands: unknown,
  });
  const commands = machine.commands.unacked();
  machine.commands.markQueuedDelivered(epoch, now);
  return {
    kind: "claimed",
    epoch,
    ackedSourceSeq: run.highestSourceSeq,
    heartbeatMs: run.timeouts.heartbeatMs,
    commands,
  };
}
