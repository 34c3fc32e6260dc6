import {
  type ApprovalBody,
  type ApprovalRecord,
  type ApprovalSummary,
  ControlEventType,
  type ErrorCode,
  fail,
  isTerminal,
  ok,
  type Result,
} from "../protocol/index.ts";
import { ApprovalStore } from "./approval-store.ts";
import type { CommandBodyFields } from "./command-store.ts";
import type { RunMachine } from "./run-machine.ts";
import type { RunRow } from "./store.ts";

/** Why an approval asked past APPROVALS_PENDING_MAX was denied: the error code, as its reason. */
const REFUSED_APPROVAL = "too_many_approvals" satisfies ErrorCode;

/** What approvals need besides their store: the run, its events and commands, their deadlines. */
export type ApprovalHost = Pick<
  RunMachine,
  "control" | "deadlines" | "limits" | "mustLoad" | "now" | "setStatus" | "submitCommand"
>;

/** What became of an approval an agent asked for. */
export type ApprovalAsked = "opened" | "refused" | "known";

/**
 * The run's approvals: asked by its agent, resolved by an operator, expired by their deadline or
 * by a new generation. The one holder of the approvals table (approval-store.ts); each operation
 * arms or disarms the approval's deadline with the row, so no caller keeps the two in step.
 */
export class Approvals {
  private readonly store: ApprovalStore;
  private readonly host: ApprovalHost;

  constructor(sql: SqlStorage, host: ApprovalHost) {
    this.store = new ApprovalStore(sql);
    this.host = host;
  }

  /** One approval with its full request; null when none was asked under `requestId`. */
  find(requestId: string): ApprovalRecord | null {
    return this.store.find(requestId);
  }

  pendingCount(): number {
    return this.store.pendingCount();
  }

  /** The pending approvals as the run record lists them (small data inline only). */
  summaries(): ApprovalSummary[] {
    return this.store.pendingSummaries();
  }

  /**
   * The agent asked (`approval.requested` stored at `seq`): a new pending approval with its
   * deadline, or, past APPROVALS_PENDING_MAX, denied at once as an expiry the runner is told of,
   * so the agent goes on and the run stays healthy. A request id already known is left alone.
   */
  ask(run: RunRow, requestId: string, seq: number, data: unknown): ApprovalAsked {
    const host = this.host;
    if (this.store.find(requestId)) return "known";
    if (this.store.pendingCount() >= host.limits.pendingApprovals) {
      const fields = { requestId, decision: "deny" as const, reason: REFUSED_APPROVAL };
      this.store.insertRefused(requestId, seq, run.generation, REFUSED_APPROVAL, host.now);
      host.control(run.epoch, ControlEventType.APPROVAL_EXPIRED, fields);
      host.submitCommand(`~approval:${requestId}`, "approval", fields, undefined, run.generation);
      return "refused";
    }
    const expiresAt = host.now + run.timeouts.approvalMs;
    this.store.insertPending(requestId, seq, data, run.generation, host.now, expiresAt);
    host.deadlines.armApproval(requestId, expiresAt);
    return "opened";
  }

  /** An operator's decision; a repeat of the same decision is answered, not applied again. */
  resolve(requestId: string, body: ApprovalBody): Result<{ created: boolean; approval: ApprovalRecord }> {
    const approval = this.store.find(requestId);
    if (!approval) return fail("stale", `no approval request ${requestId}`);
    if (approval.state !== "pending") {
      const repeat =
        approval.state !== "expired" && approval.decision === body.decision && approval.reason === body.reason;
      if (repeat) return ok({ created: false, approval });
      return fail("stale", `approval ${requestId} is already ${approval.state}`);
    }
    const run = this.host.mustLoad();
    if (isTerminal(run.status)) return fail("terminal_run", `run is ${run.status}`);
    const state = body.decision === "approve" ? "approved" : "denied";
    const resolved = this.settle(run, requestId, state, body.decision, body.reason);
    return ok({ created: true, approval: resolved });
  }

  /** The approval's deadline passed: a still pending one expires, denied (`approval_timeout`). */
  expireIfPending(run: RunRow, requestId: string): void {
    if (this.store.find(requestId)?.state !== "pending") return;
    this.settle(run, requestId, "expired", "deny", "approval_timeout");
  }

  /**
   * A new generation (`generation`) was claimed at `epoch`: the older ones' pending approvals
   * expire (`generation_replaced`), their agent being gone.
   */
  expireOlderGenerations(generation: number, epoch: number): void {
    const host = this.host;
    for (const requestId of this.store.expireOlderGenerations(generation, "generation_replaced", host.now)) {
      host.deadlines.disarmApproval(requestId);
      host.control(epoch, ControlEventType.APPROVAL_EXPIRED, { requestId, reason: "generation_replaced" });
    }
  }

  private settle(
    run: RunRow,
    requestId: string,
    state: "approved" | "denied" | "expired",
    decision: "approve" | "deny",
    reason: string | undefined,
  ): ApprovalRecord {
    const host = this.host;
    const approval = this.store.resolve(requestId, state, decision, reason, host.now);
    host.deadlines.disarmApproval(requestId);
    const type = state === "expired" ? ControlEventType.APPROVAL_EXPIRED : ControlEventType.APPROVAL_RESOLVED;
    const fields: CommandBodyFields = reason === undefined ? { requestId, decision } : { requestId, decision, reason };
    host.control(run.epoch, type, fields);
    // The decision is for the generation that asked: bound to it, and not sent at all once it is gone.
    const asked = this.store.generationOf(requestId) ?? run.generation;
    if (asked === run.generation) host.submitCommand(`~approval:${requestId}`, "approval", fields, undefined, asked);
    if (run.status === "waiting" && this.store.pendingCount() === 0) host.setStatus("running");
    return approval;
  }
}
