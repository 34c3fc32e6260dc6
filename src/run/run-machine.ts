import {
  CANCEL_GRACE_MS,
  type CommandRecord,
  type CommandType,
  ControlEventType,
  type ControlEventTypeName,
  type CreateRunBody,
  DEFAULT_RETENTION_MS,
  fail,
  isTerminal,
  type NativeSession,
  ok,
  type Outcome,
  type Result,
  type RunStatus,
} from "../protocol/index.ts";
import { Approvals } from "./approvals.ts";
import { Checkpoints } from "./checkpoints.ts";
import { canonicalJson } from "./canonical.ts";
import { type CommandBodyFields, CommandStore, commandFrame } from "./command-store.ts";
import { Deadlines } from "./deadlines.ts";
import { type Effects, noEffects } from "./effects.ts";
import { OutboxNotices } from "./outbox.ts";
import { notifyDispatcher, poolFields, timeoutsOf } from "./pool-run.ts";
import { type RunLimits, runLimits } from "./run-limits.ts";
import { ClaimAllowance } from "./claim-rate.ts";
import { purgeRun } from "./purge.ts";
import { RecoveryDecisions } from "./recovery-decision.ts";
import { RunLog } from "./run-log.ts";
import { type Recovery, type RunRow, type RunStatusRow, RunStore, readRunStatus } from "./store.ts";
import { notifyRunEnded } from "./webhook-notices.ts";
import { RunTokens } from "./token-store.ts";
import { Usage } from "./usage.ts";

/** Ids the object gives its own commands start with "~", which client command ids cannot. */
export const DEFAULT_CANCEL_ID = "~cancel";

/** A command as submitted: `created` is false for an identical repeat of an earlier one. */
export interface Submitted<T> {
  created: boolean;
  command: T;
}

/** How far past the exact lease a renewed one is stored (docs/RELIABILITY.md, "Leases"). */
export const leaseSlice = (timeouts: { heartbeatMs: number }): number => timeouts.heartbeatMs;

/**
 * The run's state machine over its SQLite tables: creating the run, operators' commands and
 * cancels, and the steps every operation shares. What a runner's frames do is in claim.ts and
 * runner-actions.ts, what its stored events mean in runner-events.ts; what deadlines do, in
 * alarm.ts; the API's view of the run is run-record.ts. Each of those modules takes the slice of
 * this machine it names (its *Host type), not the whole of it. Every table is held by one owner
 * (docs/LAYOUT.md): the run row, commands and claim allowance privately here, the others by the
 * capabilities below, so a slice carries operations, never a store. Every method runs inside one
 * storage transaction held by the caller and records what must happen afterwards in `effects`.
 */
export class RunMachine {
  readonly effects: Effects = noEffects();
  readonly log: RunLog;
  /** The capabilities other modules own, each the one holder of its tables. */
  readonly deadlines: Deadlines;
  readonly approvals: Approvals;
  readonly checkpoints: Checkpoints;
  readonly recoveryDecisions: RecoveryDecisions;
  readonly outbox: OutboxNotices;
  readonly usage: Usage;
  readonly tokens: RunTokens;
  // The stores this machine owns: reached only through its methods below.
  private readonly row: RunStore;
  private readonly claimAllowance: ClaimAllowance;
  private readonly commands: CommandStore;

  readonly now: number;
  readonly limits: RunLimits;
  /** Whether a runner socket of the current claim is open. */
  readonly runnerConnected: () => boolean;
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage, now: number, runnerConnected: () => boolean, limits: RunLimits = runLimits({})) {
    this.sql = sql;
    this.now = now;
    this.limits = limits;
    this.runnerConnected = runnerConnected;
    this.log = new RunLog(sql);
    this.row = new RunStore(sql, this.log);
    this.claimAllowance = new ClaimAllowance(sql);
    this.commands = new CommandStore(sql);
    this.deadlines = new Deadlines(sql);
    // Each capability keeps this machine as its host, read only when it acts.
    this.approvals = new Approvals(sql, this);
    this.checkpoints = new Checkpoints(sql, this);
    this.recoveryDecisions = new RecoveryDecisions(sql, this);
    this.outbox = new OutboxNotices(sql, now);
    this.usage = new Usage(sql, this);
    this.tokens = new RunTokens(sql, now);
  }

  run(): RunRow | null {
    return this.row.load();
  }

  /** The run's status, finish and purge times alone (null before it exists): a cheap look. */
  statusRow(): RunStatusRow | null {
    return readRunStatus(this.sql);
  }

  create(tenant: string, runId: string, body: CreateRunBody): Result<{ created: boolean }> {
    const fingerprint = canonicalJson({ ...body, runId });
    const existing = this.row.load();
    if (existing) {
      if (existing.purgedAt !== null) return fail("gone", `run ${runId} was purged`, { status: existing.status });
      if (existing.fingerprint !== fingerprint) {
        return fail("conflict", `run ${runId} already exists with a different body`);
      }
      return ok({ created: false });
    }
    const timeouts = timeoutsOf(body);
    this.row.insert({
      tenant,
      runId,
      fingerprint,
      status: "queued",
      createdAt: this.now,
      agent: body.agent,
      input: body.input,
      metadata: body.metadata ?? {},
      tags: body.tags ?? [],
      budget: body.budget ?? null,
      timeouts,
      retentionMs: body.retentionMs ?? DEFAULT_RETENTION_MS,
      ...poolFields(body),
    });
    this.control(0, ControlEventType.RUN_CREATED, {
      runId,
      agent: body.agent ?? null,
      input: body.input ?? null,
      metadata: body.metadata ?? {},
      ...(body.tags === undefined ? {} : { tags: body.tags }),
      ...(body.budget === undefined ? {} : { budget: body.budget }),
    });
    this.deadlines.armClaim(this.now + timeouts.claimMs);
    this.deadlines.armRunDeadline(this.now + timeouts.runMs);
    this.effects.statusChanged = true;
    notifyDispatcher(this, "queued", { start: "run" });
    return ok({ created: true });
  }

  // ---- operators -----------------------------------------------------------------------------

  /**
   * Queues a command, and delivers it when a runner holds the claim. `generation`: the one the
   * sender meant it for; naming any but the current is refused, so a replayed command cannot reach
   * a generation it was not meant for. `bindTo`: the generation it may only ever be sent to.
   */
  submitCommand(
    commandId: string,
    kind: CommandType,
    fields: CommandBodyFields,
    generation?: number,
    bindTo: number | undefined = generation,
  ): Result<Submitted<CommandRecord>> {
    const stale = this.staleGeneration(generation);
    if (stale) return stale;
    const fingerprint = canonicalJson({ commandId, kind, ...fields, generation });
    const existing = this.commands.find(commandId);
    if (existing) {
      if (existing.fingerprint !== fingerprint) {
        return fail("conflict", `command ${commandId} already exists with a different body`);
      }
      return ok({ created: false, command: existing.record });
    }
    const run = this.mustLoad();
    if (isTerminal(run.status)) return fail("terminal_run", `run is ${run.status}; it takes no commands`);
    const controllerSeq = this.row.nextControllerSeq();
    let command = this.commands.insert({
      commandId,
      controllerSeq,
      kind,
      body: fields,
      fingerprint,
      generation: bindTo ?? null,
      now: this.now,
    });
    const named = generation === undefined ? {} : { generation };
    this.control(run.epoch, ControlEventType.COMMAND_QUEUED, {
      commandId,
      controllerSeq,
      type: kind,
      ...fields,
      ...named,
    });
    const held = run.status !== "queued" && run.status !== "stalled" && run.status !== "recovering";
    if (held && this.runnerConnected()) {
      const delivery = { epoch: run.epoch, generation: run.generation };
      command = this.commands.setState(commandId, "delivered", this.now, delivery);
      this.effects.runnerFrames.push(commandFrame(command, run.generation));
    }
    return ok({ created: true, command });
  }

  /** Cancels: a connected runner is asked to stop its agent; with none (or while recovering), at once. */
  cancel(commandId: string, reason: string | undefined, generation?: number): Result<Submitted<CommandRecord | null>> {
    const run = this.mustLoad();
    if (isTerminal(run.status)) {
      const previous = this.commands.find(commandId);
      if (run.status === "cancelled") return ok({ created: false, command: previous?.record ?? null });
      return fail("terminal_run", `run is ${run.status}; it cannot be cancelled`);
    }
    const fields: CommandBodyFields = reason === undefined ? {} : { reason };
    const submitted = this.submitCommand(commandId, "cancel", fields, generation);
    if (!submitted.ok || !submitted.value.created) return submitted;
    if (submitted.value.command.state === "delivered") {
      this.deadlines.armCancelGrace(this.now + CANCEL_GRACE_MS);
      return submitted;
    }
    // Nobody is running the agent: the object applies the cancel itself.
    const command = this.commands.setState(commandId, "applied", this.now);
    this.terminalize(
      { status: "cancelled", error: { code: "cancelled", message: reason ?? "cancelled with no runner attached" } },
      true,
    );
    return ok({ created: true, command });
  }

  /** Deletes a finished run's log, commands and approvals, keeping the run row as a tombstone. */
  purge(): Result<{ status: RunStatus }> {
    const run = this.mustLoad();
    if (run.purgedAt !== null) return fail("gone", "run was already purged", { status: run.status });
    if (!isTerminal(run.status)) return fail("not_terminal", `run is ${run.status}; only finished runs can be deleted`);
    purgeRun(this.sql, this.log, this.now);
    this.deadlines.clearRunDeadlines();
    this.effects.statusChanged = true;
    return ok({ status: run.status });
  }

  // ---- shared steps --------------------------------------------------------------------------

  /** A refusal for a request naming a generation other than the current one. */
  staleGeneration(generation: number | undefined): Result<never> | null {
    if (generation === undefined) return null;
    const current = this.mustLoad().generation;
    if (generation === current) return null;
    return fail("stale", `generation ${generation} is not the run's current generation (${current})`);
  }

  mustLoad(): RunRow {
    const run = this.row.load();
    if (!run) throw new Error("run row missing");
    return run;
  }

  /** Appends a control event, written by the object in the same transaction as the change it reports. */
  control(epoch: number, type: ControlEventTypeName, data: unknown): void {
    this.effects.appended.push(this.log.append({ epoch, type, data, time: this.now }));
  }

  setStatus(status: RunStatus): void {
    const run = this.mustLoad();
    if (run.status === status) return;
    this.row.setStatus(status);
    this.effects.statusChanged = true;
  }

  /** Ends the run. `byObject`: the object decided it, so a connected runner is told and dropped. */
  terminalize(outcome: Outcome, byObject: boolean): void {
    const run = this.mustLoad();
    this.row.finish(outcome, this.now);
    if (run.recovery !== null) this.row.setRecovery(null);
    this.deadlines.clearRunDeadlines();
    this.deadlines.armRetention(this.now + run.retentionMs);
    this.control(run.epoch, ControlEventType.RUN_FINISHED, { outcome });
    this.effects.statusChanged = true;
    notifyDispatcher(this, "finished");
    notifyRunEnded(this, outcome);
    if (byObject) this.effects.endRunner = { type: "rejected", reason: "terminal-run", status: outcome.status };
  }

  // ---- the run row and commands, as the other modules change them ----------------------------

  setRecovery(recovery: Recovery | null, newEpisode = false): void {
    this.row.setRecovery(recovery, newEpisode);
  }

  countAutoRecovery(): void {
    this.row.countAutoRecovery();
  }

  setNativeSession(session: NativeSession): void {
    this.row.setNativeSession(session);
  }

  /** After a write: a status or usage change moves the status version the tenant index keeps. */
  bumpVersionIfChanged(): void {
    if (this.effects.statusChanged || this.effects.usageChanged) this.row.bumpStatusVersion();
  }

  /** Spends one claim of the allowance (CLAIMS_PER_MINUTE); false when it is used up. */
  spendClaimAllowance(): boolean {
    return this.claimAllowance.spend(this.now, this.limits.claimsPerMinute);
  }

  /** The claim: a new epoch for `runnerId` serving `generation`, which the row then names. */
  takeClaim(runnerId: string, generation: number): number {
    if (generation !== this.mustLoad().generation) this.row.setGeneration(generation);
    return this.row.claim(runnerId, generation, this.now);
  }

  /** A new claim: commands delivered to an earlier one and never acked become `unknown`; how many. */
  markUnconfirmedCommandsUnknown(): number {
    return this.commands.markUnconfirmedUnknown(this.now);
  }

  /** What the claim at `epoch` is handed: every unacked command of `generation`, now delivered. */
  handOverCommands(epoch: number, generation: number): CommandRecord[] {
    const commands = this.commands.unacked(generation);
    this.commands.markQueuedDelivered(epoch, generation, this.now);
    return commands;
  }

  /** A new generation started: older generations' unconfirmed commands are never sent to it. */
  retireCommandsBefore(generation: number): void {
    this.commands.retireOlderGenerations(generation, this.now);
  }

  /** The claimed runner's report on one command: delivered, then applied or rejected, never back. */
  ackCommand(
    epoch: number,
    ack: { controllerSeq: number; commandId: string; state: "delivered" | "applied" | "rejected" },
  ): Result<{ kind: "acked"; command: CommandRecord }> {
    const { commandId, controllerSeq, state } = ack;
    const found = this.commands.find(commandId);
    if (!found || found.record.controllerSeq !== controllerSeq) {
      return fail("not_found", `no command ${commandId} with controllerSeq ${controllerSeq}`);
    }
    const current = found.record.state;
    if (current === state) return ok({ kind: "acked", command: found.record });
    if (current === "applied" || current === "rejected") {
      return fail("conflict", `command ${commandId} was already ${current}`);
    }
    const delivery = { epoch, generation: this.mustLoad().generation };
    const command = this.commands.setState(commandId, state, this.now, delivery);
    this.control(epoch, ControlEventType.COMMAND_ACKED, { commandId, controllerSeq, state });
    return ok({ kind: "acked", command });
  }

  /**
   * Pushes the runner's lease out; a stalled run whose runner came back before a takeover resumes.
   * The stored lease is rewritten only once the exact one (now + heartbeatMs) passes it, `ahead`
   * past it: so it is never earlier than the exact lease and at most `ahead` later. A heartbeat
   * stores it a slice ahead, so one in four writes it. A batch that stores events does not call
   * this (runner-actions.ts): the alarm judges a due lease against the last runner event stored
   * (alarm.ts), so a run that then stops stalls exactly one period after its last event.
   */
  renewLease(run: RunRow, ahead: number): void {
    const exact = this.now + run.timeouts.heartbeatMs;
    const stored = this.deadlines.leaseExpiresAt();
    if (stored === null || exact > stored) this.deadlines.armLease(exact + ahead);
    if (run.status !== "stalled") return;
    this.deadlines.disarmTakeover();
    this.setStatus(this.approvals.pendingCount() > 0 ? "waiting" : "running");
    this.control(run.epoch, ControlEventType.RUN_RESUMED, { epoch: run.epoch });
  }
}
