import type { RecoveryHost } from "./recovery.ts";
import { ControlEventType, isTerminal } from "../protocol/index.ts";
import { enterRecovery, recoveryLapsed } from "./recovery.ts";
import type { RunMachine } from "./run-machine.ts";
import type { Timer } from "./timers.ts";

/** What the due timers act on. */
export type AlarmHost = Pick<
  RunMachine,
  | "approvals"
  | "control"
  | "deadlines"
  | "log"
  | "now"
  | "purge"
  | "run"
  | "setStatus"
  | "submitCommand"
  | "terminalize"
> &
  RecoveryHost;

// The run's one alarm. Every deadline is a row of Deadlines (deadlines.ts); the alarm is kept at
// the earliest of them (armAlarm), and when it rings it fires the ones that are due.

/**
 * Acts on every timer that is due. Alarms are delivered at least once, so each handler checks
 * the run is still in the state the timer was set for, and deletes its row when done.
 * Returns true when the tenant index needs to be brought up to date.
 */
export function fireDueTimers(machine: AlarmHost): { indexSync: boolean } {
  let indexSync = false;
  machine.deadlines.takeDue(machine.now, (timer) => {
    if (timer.kind === "index_sync") indexSync = true;
    else fire(machine, timer);
  });
  return { indexSync };
}

function fire(machine: AlarmHost, timer: Timer): void {
  const run = machine.run();
  if (!run || run.purgedAt !== null) return;
  const timeouts = run.timeouts;
  switch (timer.kind) {
    case "claim":
      if (run.status === "queued") {
        machine.terminalize(
          {
            status: "timed_out",
            error: { code: "claim_timeout", message: `no runner claimed the run within ${timeouts.claimMs} ms` },
          },
          true,
        );
      }
      return;
    case "lease":
      if (run.status === "running" || run.status === "waiting") {
        if (stillActive(machine, "lease", timeouts.heartbeatMs)) return;
        machine.setStatus("stalled");
        machine.deadlines.armTakeover(machine.now + timeouts.takeoverMs);
        machine.control(run.epoch, ControlEventType.RUN_STALLED, {
          epoch: run.epoch,
          reason: "heartbeat lease expired",
        });
      }
      return;
    case "takeover":
      // Nobody took over: the sandbox may be gone with its runner; the run waits to be recovered.
      if (run.status === "stalled") enterRecovery(machine, run);
      return;
    case "recover":
      recoveryLapsed(machine, run);
      return;
    case "approval":
      if (!isTerminal(run.status)) machine.approvals.expireIfPending(run, timer.ref);
      return;
    case "idle":
      if (run.status === "waiting") machine.deadlines.armIdle(machine.now + timeouts.idleMs);
      else if (run.status === "running" && !stillActive(machine, "idle", timeouts.idleMs))
        endWithCancel(machine, "idle_timeout", `no runner event for ${timeouts.idleMs} ms`);
      return;
    case "deadline":
      if (!isTerminal(run.status))
        endWithCancel(machine, "run_deadline", `the run exceeded its ${timeouts.runMs} ms deadline`);
      return;
    case "cancel_grace":
      if (!isTerminal(run.status)) {
        machine.terminalize(
          {
            status: "cancelled",
            error: { code: "cancel_unconfirmed", message: "the runner did not confirm the cancel in time" },
          },
          true,
        );
      }
      return;
    case "retention":
      if (isTerminal(run.status)) machine.purge();
      return;
  }
}

/**
 * A batch that stores events does not move the lease or idle deadline (runner-actions.ts): the
 * log holds its time. So a due one is judged again against the last runner event stored: when
 * that is less than `period` ago, the deadline is stored again at exactly `period` after it and
 * nothing happens now. Read from storage, so the judgement is the same after a restart.
 */
function stillActive(machine: AlarmHost, kind: "lease" | "idle", period: number): boolean {
  const last = machine.log.lastRunnerEventAt();
  if (last === null || last + period <= machine.now) return false;
  if (kind === "lease") machine.deadlines.armLease(last + period);
  else machine.deadlines.armIdle(last + period);
  return true;
}

/** Times the run out and tells a connected runner to stop its agent. */
function endWithCancel(machine: AlarmHost, code: string, message: string): void {
  machine.submitCommand(`~${code}`, "cancel", { reason: code });
  machine.terminalize({ status: "timed_out", error: { code, message } }, true);
}
