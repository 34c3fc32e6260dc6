import {
  type ApprovalBody,
  type ApprovalRecord,
  type CommandRecord,
  type CommandType,
  type CreateRunBody,
  DEFAULT_RETENTION_MS,
  resolveTimeouts,
  type Failure,
  fail,
  isFailure,
  isTerminal,
  type Outcome,
  type RunnerEvent,
  type RunnerOutcome,
  type RunRecord,
  type RunStatus,
  CANCEL_GRACE_MS,
} from "../protocol/index.ts";
import { type AppendDisposition, classify } from "./append.ts";
import { ApprovalStore } from "./approval-store.ts";
import { canonicalJson } from "./canonical.ts";
import { type CommandBodyFields, CommandStore, commandFrame } from "./command-store.ts";
import { type Effects, noEffects } from "./effects.ts";
import { type RunRow, RunStore } from "./store.ts";
import { Timers } from "./timers.ts";

/** Ids the object gives its own commands start with "~", which client command ids cannot. */
export const DEFAULT_CANCEL_ID = "~cancel";

export type ClaimResult =
  | { kind: "claimed"; epoch: number; ackedSourceSeq: number; heartbeatMs: number; commands: CommandRecord[] }
  | { kind: "rejected"; status: RunStatus }
  | { kind: "stale_epoch"; epoch: number };

export type BatchResult =
  | { kind: "stale_epoch"; epoch: number }
  | { kind: "terminal"; status: RunStatus }
  | { kind: "stored"; highestSourceSeq: number; stoppedAt: AppendDisposition | null };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The run's state machine over its SQLite tables. Every method runs inside one storage
 * transaction held by the caller and records what must happen afterwards in `effects`.
 */
export class RunMachine {
  readonly effects: Effects = noEffects();
  readonly store: RunStore;
  readonly commands: CommandStore;
  readonly approvals: ApprovalStore;
  readonly timers: Timers;

  readonly now: number;
  private readonly runnerConnected: () => boolean;

  constructor(sql: SqlStorage, now: number, runnerConnected: () => boolean) {
    this.now = now;
    this.runnerConnected = runnerConnected;
    this.store = new RunStore(sql);
    this.commands = new CommandStore(sql);
    this.approvals = new ApprovalStore(sql);
    this.timers = new Timers(sql);
  }

  run(): RunRow | null {
    return this.store.load();
  }

  record(): RunRecord | null {
    const run = this.store.load();
    if (!run) return null;
    return {
      id: run.runId,
      status: run.status,
      epoch: run.epoch,
      createdAt: iso(run.createdAt) as string,
      claimedAt: iso(run.claimedAt),
      finishedAt: iso(run.finishedAt),
      lastSeq: run.lastSeq,
      highestSourceSeq: run.highestSourceSeq,
      outcome: run.outcome,
      agent: run.agent,
      input: run.input,
      timeouts: run.timeouts,
      retentionMs: run.retentionMs,
      metadata: run.metadata,
      pendingApprovals: this.approvals.pending(),
      runner: {
        id: run.runnerId,
        connected: this.runnerConnected(),
        leaseExpiresAt: iso(this.timers.get("lease")),
      },
    };
  }

  create(tenant: string, runId: string, body: CreateRunBody): { created: boolean } | Failure {
    const fingerprint = canonicalJson({ ...body, runId });
    const existing = this.store.load();
    if (existing) {
      if (existing.purgedAt !== null) return fail("gone", `run ${runId} was purged`, { status: existing.status });
      if (existing.fingerprint !== fingerprint) {
        return fail("conflict", `run ${runId} already exists with a different body`);
      }
      return { created: false };
    }
    const timeouts = resolveTimeouts(body.timeouts);
    this.store.insert({
      tenant,
      runId,
      fingerprint,
      status: "queued",
      createdAt: this.now,
      agent: body.agent,
      input: body.input,
      metadata: body.metadata ?? {},
      timeouts,
      retentionMs: body.retentionMs ?? DEFAULT_RETENTION_MS,
    });
    this.control(0, "run.created", {
      runId,
      agent: body.agent ?? null,
      input: body.input ?? null,
      metadata: body.metadata ?? {},
    });
    this.timers.set("claim", this.now + timeouts.claimMs);
    this.timers.set("deadline", this.now + timeouts.runMs);
    this.effects.statusChanged = true;
    return { created: true };
  }

  // ---- runner side -------------------------------------------------------------------------

  /** `heldEpoch`: a reconnecting runner's previous epoch; a newer claim since then wins. */
  claim(runnerId: string, heldEpoch?: number): ClaimResult {
    const run = this.mustLoad();
    if (isTerminal(run.status)) return { kind: "rejected", status: run.status };
    if (heldEpoch !== undefined && heldEpoch < run.epoch) return { kind: "stale_epoch", epoch: run.epoch };
    const epoch = this.store.claim(runnerId, this.now);
    const unknown = this.commands.markUnconfirmedUnknown(this.now);
    const status: RunStatus = this.approvals.pending().length > 0 ? "waiting" : "running";
    this.setStatus(status);
    this.timers.clear("claim");
    this.timers.clear("takeover");
    this.timers.set("lease", this.now + run.timeouts.heartbeatMs);
    this.timers.set("idle", this.now + run.timeouts.idleMs);
    this.control(epoch, "run.claimed", { epoch, runnerId, previousEpoch: run.epoch, unknownCommands: unknown });
    const commands = this.commands.unacked();
    this.commands.markQueuedDelivered(epoch, this.now);
    return {
      kind: "claimed",
      epoch,
      ackedSourceSeq: run.highestSourceSeq,
      heartbeatMs: run.timeouts.heartbeatMs,
      commands,
    };
  }

  appendBatch(epoch: number, events: RunnerEvent[]): BatchResult {
    const run = this.mustLoad();
    if (epoch !== run.epoch) return { kind: "stale_epoch", epoch: run.epoch };
    if (isTerminal(run.status)) return { kind: "terminal", status: run.status };
    this.renewLease(run);
    // Judged in memory against the runner's state as the batch advances, then written in one pass.
    let runner = this.store.runnerState();
    const accepted = new Map<number, RunnerEvent>();
    const stored = (sourceSeq: number) => accepted.get(sourceSeq) ?? this.store.runnerEvent(sourceSeq);
    let stoppedAt: AppendDisposition | null = null;
    for (const event of events) {
      const disposition = classify(runner, epoch, event, stored);
      if (disposition.kind === "duplicate") continue;
      if (disposition.kind !== "accepted") {
        stoppedAt = disposition;
        break;
      }
      runner = disposition.state;
      accepted.set(event.sourceSeq, event);
    }
    const drafts = [...accepted.values()].map((event) => ({
      epoch,
      sourceSeq: event.sourceSeq,
      type: event.type,
      data: event.data ?? null,
      time: parseTime(event.time) ?? this.now,
    }));
    if (drafts.length > 0 && runner) {
      const appended = this.store.appendEvents(drafts, runner);
      this.effects.appended.push(...appended);
      for (const event of appended) this.noticeApprovalRequest(event.seq, event);
    }
    const highest = runner?.lastSeq ?? run.highestSourceSeq;
    this.timers.set("idle", this.now + run.timeouts.idleMs);
    return { kind: "stored", highestSourceSeq: highest, stoppedAt };
  }

  heartbeat(epoch: number): { kind: "ok" } | { kind: "stale_epoch"; epoch: number } {
    const run = this.mustLoad();
    if (epoch !== run.epoch) return { kind: "stale_epoch", epoch: run.epoch };
    if (!isTerminal(run.status)) this.renewLease(run);
    return { kind: "ok" };
  }

  complete(
    epoch: number,
    outcome: RunnerOutcome,
  ): { kind: "completed"; status: RunStatus } | { kind: "stale_epoch"; epoch: number } | Failure {
    const run = this.mustLoad();
    if (epoch !== run.epoch) return { kind: "stale_epoch", epoch: run.epoch };
    if (isTerminal(run.status)) {
      if (run.outcome && canonicalJson(run.outcome) === canonicalJson(outcome)) {
        return { kind: "completed", status: run.status };
      }
      return fail("outcome_conflict", `run already ended as ${run.status}; a different outcome changes nothing`);
    }
    this.terminalize(outcome, false);
    return { kind: "completed", status: outcome.status };
  }

  ackCommand(
    epoch: number,
    controllerSeq: number,
    commandId: string,
    state: "delivered" | "applied" | "rejected",
  ): { kind: "ok"; command: CommandRecord } | { kind: "stale_epoch"; epoch: number } | Failure {
    const run = this.mustLoad();
    if (epoch !== run.epoch) return { kind: "stale_epoch", epoch: run.epoch };
    const found = this.commands.find(commandId);
    if (!found || found.record.controllerSeq !== controllerSeq) {
      return fail("not_found", `no command ${commandId} with controllerSeq ${controllerSeq}`);
    }
    const current = found.record.state;
    if (current === state) return { kind: "ok", command: found.record };
    if (current === "applied" || current === "rejected") {
      return fail("conflict", `command ${commandId} was already ${current}`);
    }
    const command = this.commands.setState(commandId, state, this.now, epoch);
    this.control(epoch, "command.acked", { commandId, controllerSeq, state });
    return { kind: "ok", command };
  }

  // ---- controller side ---------------------------------------------------------------------

  submitCommand(
    commandId: string,
    kind: CommandType,
    fields: CommandBodyFields,
  ): { created: boolean; command: CommandRecord } | Failure {
    const fingerprint = canonicalJson({ commandId, kind, ...fields });
    const existing = this.commands.find(commandId);
    if (existing) {
      if (existing.fingerprint !== fingerprint) {
        return fail("conflict", `command ${commandId} already exists with a different body`);
      }
      return { created: false, command: existing.record };
    }
    const run = this.mustLoad();
    if (isTerminal(run.status)) return fail("terminal_run", `run is ${run.status}; it takes no commands`);
    const controllerSeq = this.store.nextControllerSeq();
    let command = this.commands.insert({ commandId, controllerSeq, kind, body: fields, fingerprint, now: this.now });
    this.control(run.epoch, "command.queued", { commandId, controllerSeq, type: kind, ...fields });
    if (run.status !== "queued" && run.status !== "stalled" && this.runnerConnected()) {
      command = this.commands.setState(commandId, "delivered", this.now, run.epoch);
      this.effects.runnerFrames.push(commandFrame(command));
    }
    return { created: true, command };
  }

  cancel(commandId: string, reason: string | undefined): { created: boolean; command: CommandRecord | null } | Failure {
    const run = this.mustLoad();
    if (isTerminal(run.status)) {
      const previous = this.commands.find(commandId);
      if (run.status === "cancelled") return { created: false, command: previous?.record ?? null };
      return fail("terminal_run", `run is ${run.status}; it cannot be cancelled`);
    }
    const fields: CommandBodyFields = reason === undefined ? {} : { reason };
    const submitted = this.submitCommand(commandId, "cancel", fields);
    if (isFailure(submitted) || !submitted.created) return submitted;
    if (submitted.command.state === "delivered") {
      this.timers.set("cancel_grace", this.now + CANCEL_GRACE_MS);
      return submitted;
    }
    // Nobody is running the agent: the object applies the cancel itself.
    const command = this.commands.setState(commandId, "applied", this.now);
    this.terminalize(
      { status: "cancelled", error: { code: "cancelled", message: reason ?? "cancelled with no runner attached" } },
      true,
    );
    return { created: true, command };
  }

  resolveApproval(requestId: string, body: ApprovalBody): { created: boolean; approval: ApprovalRecord } | Failure {
    const approval = this.approvals.find(requestId);
    if (!approval) return fail("stale", `no approval request ${requestId}`);
    if (approval.state !== "pending") {
      const repeat =
        approval.state !== "expired" && approval.decision === body.decision && approval.reason === body.reason;
      if (repeat) return { created: false, approval };
      return fail("stale", `approval ${requestId} is already ${approval.state}`);
    }
    const run = this.mustLoad();
    if (isTerminal(run.status)) return fail("terminal_run", `run is ${run.status}`);
    const resolved = this.settleApproval(
      run,
      requestId,
      body.decision === "approve" ? "approved" : "denied",
      body.decision,
      body.reason,
    );
    return { created: true, approval: resolved };
  }

  purge(): { kind: "purged" } | Failure {
    const run = this.mustLoad();
    if (run.purgedAt !== null) return fail("gone", "run was already purged", { status: run.status });
    if (!isTerminal(run.status)) return fail("not_terminal", `run is ${run.status}; only finished runs can be deleted`);
    this.store.purge(this.now);
    this.timers.clearAllExcept(["index_sync"]);
    this.effects.statusChanged = true;
    return { kind: "purged" };
  }

  // ---- shared steps --------------------------------------------------------------------------

  mustLoad(): RunRow {
    const run = this.store.load();
    if (!run) throw new Error("run row missing");
    return run;
  }

  control(epoch: number, type: string, data: unknown): void {
    this.effects.appended.push(this.store.append({ epoch, type, data, time: this.now }));
  }

  setStatus(status: RunStatus): void {
    const run = this.mustLoad();
    if (run.status === status) return;
    this.store.setStatus(status);
    this.effects.statusChanged = true;
  }

  /** Ends the run. `byObject`: the object decided it, so a connected runner is told and dropped. */
  terminalize(outcome: Outcome, byObject: boolean): void {
    const run = this.mustLoad();
    this.store.finish(outcome, this.now);
    this.timers.clearAllExcept(["index_sync"]);
    this.timers.set("retention", this.now + run.retentionMs);
    this.control(run.epoch, "run.finished", { outcome });
    this.effects.statusChanged = true;
    if (byObject) this.effects.endRunner = { type: "rejected", reason: "terminal-run", status: outcome.status };
  }

  settleApproval(
    run: RunRow,
    requestId: string,
    state: "approved" | "denied" | "expired",
    decision: "approve" | "deny",
    reason: string | undefined,
  ): ApprovalRecord {
    const approval = this.approvals.resolve(requestId, state, decision, reason, this.now);
    this.timers.clear("approval", requestId);
    const type = state === "expired" ? "approval.expired" : "approval.resolved";
    this.control(run.epoch, type, reason === undefined ? { requestId, decision } : { requestId, decision, reason });
    const fields: CommandBodyFields = reason === undefined ? { requestId, decision } : { requestId, decision, reason };
    this.submitCommand(`~approval:${requestId}`, "approval", fields);
    if (run.status === "waiting" && this.approvals.pending().length === 0) this.setStatus("running");
    return approval;
  }

  private renewLease(run: RunRow): void {
    this.timers.set("lease", this.now + run.timeouts.heartbeatMs);
    if (run.status !== "stalled") return;
    // The same runner came back before anyone took over: it keeps its claim.
    this.timers.clear("takeover");
    this.setStatus(this.approvals.pending().length > 0 ? "waiting" : "running");
    this.control(run.epoch, "run.resumed", { epoch: run.epoch });
  }

  private noticeApprovalRequest(seq: number, event: { type: string; data?: unknown }): void {
    if (event.type !== "approval.requested") return;
    const data = event.data as { requestId?: unknown } | null | undefined;
    const requestId = data?.requestId;
    if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > 200) return;
    if (this.approvals.find(requestId)) return;
    const run = this.mustLoad();
    const expiresAt = this.now + run.timeouts.approvalMs;
    this.approvals.insertPending(requestId, seq, event.data, this.now, expiresAt);
    this.timers.set("approval", expiresAt, requestId);
    if (run.status === "running") this.setStatus("waiting");
  }
}

function parseTime(time: string | undefined): number | null {
  if (time === undefined) return null;
  const ms = Date.parse(time);
  return Number.isFinite(ms) ? ms : null;
}
