import { keepAlarmAt } from "../objects/alarm-schedule.ts";
import { type Timer, Timers } from "./timers.ts";

/**
 * The run's deadlines, by what each is for: the one holder of the timers table (timers.ts). Each
 * is a row; the object keeps one alarm at the earliest (armAlarm), and when it rings the alarm
 * handler takes what is due (alarm.ts). Times are absolute (ms): callers say when, not how long.
 */
export class Deadlines {
  private readonly timers: Timers;

  constructor(sql: SqlStorage) {
    this.timers = new Timers(sql);
  }

  /** A queued run not claimed by `at` times out (claim_timeout). */
  armClaim(at: number): void {
    this.timers.set("claim", at);
  }

  disarmClaim(): void {
    this.timers.clear("claim");
  }

  /** The run's own deadline (runMs). */
  armRunDeadline(at: number): void {
    this.timers.set("deadline", at);
  }

  /** The runner's lease: past it with no renewal, the run stalls. */
  armLease(at: number): void {
    this.timers.set("lease", at);
  }

  disarmLease(): void {
    this.timers.clear("lease");
  }

  /** When the stored lease expires; null when none is armed (no claim, or stalled). */
  leaseExpiresAt(): number | null {
    return this.timers.get("lease");
  }

  /** A running run with no runner event by `at` times out (idle_timeout). */
  armIdle(at: number): void {
    this.timers.set("idle", at);
  }

  /** A stalled run not taken over by `at` goes recovering. */
  armTakeover(at: number): void {
    this.timers.set("takeover", at);
  }

  disarmTakeover(): void {
    this.timers.clear("takeover");
  }

  /** A recovering run not recovered by `at` fails (runner_lost). */
  armRecover(at: number): void {
    this.timers.set("recover", at);
  }

  disarmRecover(): void {
    this.timers.clear("recover");
  }

  /** A pending approval not resolved by `at` expires. */
  armApproval(requestId: string, at: number): void {
    this.timers.set("approval", at, requestId);
  }

  disarmApproval(requestId: string): void {
    this.timers.clear("approval", requestId);
  }

  /** A cancel the runner did not confirm by `at` ends the run anyway. */
  armCancelGrace(at: number): void {
    this.timers.set("cancel_grace", at);
  }

  /** The run ended or was purged: every deadline of the run goes; the index and outbox retries stay. */
  clearRunDeadlines(): void {
    this.timers.clearAllExcept(["index_sync", "outbox"]);
  }

  /** A finished run is purged at `at` (retentionMs). */
  armRetention(at: number): void {
    this.timers.set("retention", at);
  }

  /** The tenant index update failed: the alarm tries again at `at`. */
  armIndexSync(at: number): void {
    this.timers.set("index_sync", at);
  }

  /** The outbox holds notifications: the alarm delivers them at `at` should the object not. */
  armOutbox(at: number): void {
    this.timers.set("outbox", at);
  }

  /** As armOutbox, unless a delivery is already due (an earlier retry is kept). */
  armOutboxUnlessArmed(at: number): void {
    if (this.timers.get("outbox") === null) this.timers.set("outbox", at);
  }

  disarmOutbox(): void {
    this.timers.clear("outbox");
  }

  outboxArmed(): boolean {
    return this.timers.get("outbox") !== null;
  }

  /**
   * Hands every deadline due at `now` to `fire`, in order, each removed just before it fires. The
   * outbox's stays until its rows are delivered (outbox.ts): the object flushes after the alarm.
   */
  takeDue(now: number, fire: (timer: Timer) => void): void {
    for (const timer of this.timers.due(now)) {
      if (timer.kind === "outbox") continue;
      this.timers.clear(timer.kind, timer.ref);
      fire(timer);
    }
  }
}

/**
 * Sets the object's alarm to the earliest deadline, or deletes it when none is left. Called after
 * each commit and on every wake of the object (a commit that died before this left its rows unarmed).
 */
export function armAlarm(storage: DurableObjectStorage): Promise<void> {
  return keepAlarmAt(storage, new Timers(storage.sql).earliest());
}
