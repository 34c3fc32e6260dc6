import { LOG_START } from "../log/offsets.ts";
import type { LogWaiters } from "../log/waiters.ts";
import { type Failure, fail, ok, type Result } from "../protocol/index.ts";
import { fireDueTimers } from "./alarm.ts";
import { armAlarm, Deadlines } from "./deadlines.ts";
import type { RunHost } from "./host.ts";
import { syncTenantIndex, type TenantIndexApi } from "./index-sync.ts";
import { type Deliver, flushOutbox } from "./outbox.ts";
import { RunMachine } from "./run-machine.ts";
import type { RunLimits } from "./run-limits.ts";
import { RunSockets } from "./sockets/run-sockets.ts";
import { RunLog } from "./run-log.ts";
import { readRunStatus } from "./store.ts";
import { checkRunToken, type PresentedToken, TokenVerdicts } from "./token-store.ts";

/** Carries a Failure out of a transaction so the transaction rolls back. */
class Refused extends Error {
  readonly failure: Failure;

  constructor(failure: Failure) {
    super(failure.message);
    this.failure = failure;
  }
}

/**
 * How every operation on a run is carried out: reads answer 404/410 for a missing or purged run;
 * writes run in one storage transaction and, once it commits, deliver what they produced (frames
 * to sockets, wake-ups to stream readers), set the alarm to the earliest deadline and update the
 * tenant's index.
 */
export class RunOperations implements RunHost {
  readonly sockets: RunSockets;
  readonly limits: RunLimits;
  private readonly storage: DurableObjectStorage;
  private readonly waiters: LogWaiters;
  private readonly tenantIndex: (tenant: string) => TenantIndexApi;
  private readonly deliver: Deliver;
  /** The tokens' verdicts as last read, forgotten by any write that revokes (token-store.ts). */
  private readonly tokenVerdicts = new TokenVerdicts();
  /** One outbox delivery at a time; `flushAgain` asks the running one for another pass. */
  private flushing = false;
  private flushAgain = false;

  constructor(
    ctx: DurableObjectState,
    waiters: LogWaiters,
    tenantIndex: (tenant: string) => TenantIndexApi,
    deliver: Deliver,
    limits: RunLimits,
  ) {
    this.limits = limits;
    this.sockets = new RunSockets(ctx, limits.viewerBacklogBytes);
    this.storage = ctx.storage;
    this.waiters = waiters;
    this.tenantIndex = tenantIndex;
    this.deliver = deliver;
  }

  async operate<T>(step: (machine: RunMachine) => Result<T>): Promise<Result<T>> {
    const machine = this.machine();
    let value: T;
    try {
      value = this.storage.transactionSync(() => {
        const result = step(machine);
        if (!result.ok) throw new Refused(result);
        machine.bumpVersionIfChanged();
        return result.value;
      });
    } catch (error) {
      if (error instanceof Refused) return error.failure;
      throw error;
    } finally {
      // A revocation (a purge too, below) is seen by the next check: nothing is awaited in between.
      if (machine.tokens.revoked) this.tokenVerdicts.forget();
    }
    // Only the status is read back, not the whole row: load() parsing its JSON columns was a
    // twentieth of a runner frame's time. The epoch is the log's, as load() answers it.
    const run = readRunStatus(this.storage.sql);
    if (run?.purgedAt != null) this.tokenVerdicts.forget();
    if (run) {
      const epoch = machine.log.claimEpochNow();
      this.sockets.deliver(machine.effects, epoch, run.status, machine.log.tail() ?? LOG_START);
    }
    if (machine.effects.appended.length > 0 || machine.effects.statusChanged) this.waiters.notify();
    await armAlarm(this.storage);
    if (machine.effects.statusChanged || machine.effects.usageChanged)
      await syncTenantIndex(this.storage, this.tenantIndex);
    if (machine.outbox.added) await this.flushOutbox();
    return ok(value);
  }

  /** Delivers the outbox's notifications (outbox.ts); what fails is retried by the alarm. */
  async flushOutbox(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    try {
      do {
        this.flushAgain = false;
        const { failed } = await flushOutbox(this.storage.sql, this.deliver, Date.now);
        if (failed) break;
      } while (this.flushAgain);
    } finally {
      this.flushing = false;
      await armAlarm(this.storage);
    }
  }

  /** A read that answers 404 for no run and 410 for a purged one. */
  read<T>(step: (machine: RunMachine) => T): Result<T> {
    const machine = this.machine();
    const run = machine.statusRow();
    if (!run) return fail("not_found", "no such run");
    if (run.purgedAt !== null) {
      return fail("gone", "the run was purged", {
        status: run.status,
        finishedAt: new Date(run.finishedAt ?? run.purgedAt).toISOString(),
      });
    }
    return ok(step(machine));
  }

  /** Whether a token may still act on the run, from the verdicts kept in memory (TokenVerdicts). */
  checkToken(token: PresentedToken): Result<null> {
    return this.tokenVerdicts.check(this.storage.sql, token, Date.now());
  }

  /**
   * A write on a live run by the holder of `token` (null: an API key). The token is checked inside
   * the write's own transaction, so one revoked after the request's first check cannot still act.
   */
  operateOnLiveAs<T>(token: PresentedToken | null, step: (machine: RunMachine) => Result<T>): Promise<Result<T>> {
    return this.operateOnLive((machine) => {
      if (token) {
        // Read from storage inside the write, as everything the write judges by.
        const valid = checkRunToken(this.storage.sql, token, Date.now());
        if (!valid.ok) return valid;
      }
      return step(machine);
    });
  }

  /** A write on a run that exists and was not purged. */
  async operateOnLive<T>(step: (machine: RunMachine) => Result<T>): Promise<Result<T>> {
    const exists = this.read(() => true);
    if (!exists.ok) return exists;
    return this.operate(step);
  }

  /** The alarm rang: fire the due timers, then retry the index update if one was left pending. */
  async fireAlarm(): Promise<void> {
    let indexSync = false;
    const fired = await this.operate((machine) => {
      indexSync = fireDueTimers(machine).indexSync;
      return ok(null);
    });
    if (fired.ok && indexSync) await syncTenantIndex(this.storage, this.tenantIndex);
    if (new Deadlines(this.storage.sql).outboxArmed()) await this.flushOutbox();
  }

  private machine(): RunMachine {
    return new RunMachine(this.storage.sql, Date.now(), () => this.runnerConnected(), this.limits);
  }

  private runnerConnected(): boolean {
    return this.sockets.currentRunner(new RunLog(this.storage.sql).claimEpochNow()) !== null;
  }
}
