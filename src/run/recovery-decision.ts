import { ControlEventType, fail, ok, type RecoverBody, type Result } from "../protocol/index.ts";
import { RecoveryDecisionStore } from "./decision-store.ts";
import { dispatchRecovery, type PoolRunHost } from "./pool-run.ts";
import type { RunMachine } from "./run-machine.ts";

/** What an operator's recovery decision needs besides its store. */
export type RecoveryDecisionHost = Pick<
  RunMachine,
  "checkpoints" | "control" | "mustLoad" | "now" | "setRecovery" | "terminalize"
> &
  PoolRunHost;

/** Operators' recovery decisions: the one holder of their table (decision-store.ts). */
export class RecoveryDecisions {
  private readonly store: RecoveryDecisionStore;
  private readonly host: RecoveryDecisionHost;

  constructor(sql: SqlStorage, host: RecoveryDecisionHost) {
    this.store = new RecoveryDecisionStore(sql);
    this.host = host;
  }

  decide(body: RecoverBody): Result<{ created: boolean; decision: RecoverBody }> {
    return decideRecovery(this.host, this.store, body);
  }
}

/**
 * An operator decides how a recovering run goes on: `resume` (needs a provider session and a
 * checkpoint; the next resumed generation proceeds even if events passed the checkpoint),
 * `restart` (the next plain claim starts a fresh generation) or `fail` (the run ends failed,
 * `recovery_declined`). Idempotent by commandId; the first decision of a recovery wins, any other
 * is a conflict.
 */
function decideRecovery(
  machine: RecoveryDecisionHost,
  decisions: RecoveryDecisionStore,
  body: RecoverBody,
): Result<{ created: boolean; decision: RecoverBody }> {
  const earlier = decisions.find(body.commandId);
  if (earlier) {
    if (earlier.action !== body.action) {
      return fail("conflict", `recovery decision ${body.commandId} was ${earlier.action}, not ${body.action}`);
    }
    return ok({ created: false, decision: earlier });
  }
  const run = machine.mustLoad();
  const taken = decisions.forEpisode(run.recoveryEpisode);
  if (taken && (run.status === "recovering" || taken.action === "fail")) {
    return fail("conflict", `the recovery was already decided: ${taken.action} (commandId ${taken.commandId})`);
  }
  if (run.status !== "recovering" || run.recovery === null) {
    return fail("not_recovering", `run is ${run.status}; only a recovering run takes a recovery decision`);
  }
  if (body.action === "resume") {
    const missing = [
      run.nativeSession === null ? "no agent session was reported" : null,
      machine.checkpoints.current() === null ? "no checkpoint was uploaded" : null,
    ].filter((reason) => reason !== null);
    if (missing.length > 0) return fail("not_resumable", `the run cannot be resumed: ${missing.join(" and ")}`);
  }
  decisions.insert(body, run.recoveryEpisode, machine.now);
  machine.control(run.epoch, ControlEventType.RUN_RECOVERY_DECIDED, { action: body.action, commandId: body.commandId });
  if (body.action === "fail") {
    machine.terminalize(
      {
        status: "failed",
        error: { code: "recovery_declined", message: `an operator declined to recover the run (${body.commandId})` },
      },
      true,
    );
  } else {
    const reason = `an operator chose ${body.action} (${body.commandId})`;
    machine.setRecovery({ ...run.recovery, mode: body.action, reason });
    dispatchRecovery(machine, run, body.action);
  }
  return ok({ created: true, decision: body });
}
