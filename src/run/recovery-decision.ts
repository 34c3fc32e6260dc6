import type { RecoveryHost } from "./recovery.ts";
import { ControlEventType, fail, ok, type RecoverBody, type Result } from "../protocol/index.ts";
import { dispatchRecovery } from "./pool-run.ts";
import type { RunMachine } from "./run-machine.ts";

/** What an operator's recovery decision needs. */
export type RecoveryDecisionHost = Pick<
  RunMachine,
  "checkpoints" | "control" | "decisions" | "mustLoad" | "now" | "store" | "terminalize"
> &
  RecoveryHost;

/**
 * An operator decides how a recovering run goes on: `resume` (needs a provider session and a
 * checkpoint; the next resumed generation proceeds even if events passed the checkpoint),
 * `restart` (the next plain claim starts a fresh generation) or `fail` (the run ends failed,
 * `recovery_declined`). Idempotent by commandId; the first decision of a recovery wins, any other
 * is a conflict.
 */
export function decideRecovery(
  machine: RecoveryDecisionHost,
  body: RecoverBody,
): Result<{ created: boolean; decision: RecoverBody }> {
  const decisions = machine.decisions;
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
    machine.store.setRecovery({ ...run.recovery, mode: body.action, reason });
    dispatchRecovery(machine, run, body.action);
  }
  return ok({ created: true, decision: body });
}
