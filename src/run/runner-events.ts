import { AgentEventType, ControlEventType, type ErrorCode } from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";
import type { RunRow } from "./store.ts";
import { noticeUsage, type UsageHost } from "./usage.ts";
import { notifyWebhooks, type WebhookHost } from "./webhook-notices.ts";

// What the run makes of the events its runner stores: approvals asked, the agent's session, usage.

/** Why an approval asked past APPROVALS_PENDING_MAX was denied: the error code, as its reason. */
const REFUSED_APPROVAL = "too_many_approvals" satisfies ErrorCode;

export type RunnerEventHost = Pick<
  RunMachine,
  "approvals" | "control" | "limits" | "mustLoad" | "now" | "setStatus" | "store" | "submitCommand" | "timers"
> &
  UsageHost &
  WebhookHost;

/**
 * What a stored runner event means to the run: `approval.requested` opens an approval and
 * makes the run wait; `agent.session` `{provider, id}` records the provider's session.
 */
export function noticeRunnerEvent(
  machine: RunnerEventHost,
  seq: number,
  event: { type: string; data?: unknown },
): void {
  if (noticeUsage(machine, event)) return;
  if (event.type === AgentEventType.AGENT_SESSION) {
    noticeSession(machine, event.data);
    return;
  }
  if (event.type !== AgentEventType.APPROVAL_REQUESTED) return;
  const data = event.data as { requestId?: unknown } | null | undefined;
  const requestId = data?.requestId;
  if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > 200) return;
  if (machine.approvals.find(requestId)) return;
  const run = machine.mustLoad();
  if (machine.approvals.pendingCount() >= machine.limits.pendingApprovals) {
    refuseApproval(machine, run, requestId, seq);
    return;
  }
  const expiresAt = machine.now + run.timeouts.approvalMs;
  machine.approvals.insertPending(requestId, seq, event.data, run.generation, machine.now, expiresAt);
  machine.timers.set("approval", expiresAt, requestId);
  if (run.status === "running") machine.setStatus("waiting");
  notifyWebhooks(machine, "run.waiting", requestId);
}

/**
 * The run already has its most pending approvals (APPROVALS_PENDING_MAX): the request is denied
 * at once, as an expiry the runner is told of, so the agent goes on and the run stays healthy.
 */
function refuseApproval(machine: RunnerEventHost, run: RunRow, requestId: string, seq: number): void {
  const fields = { requestId, decision: "deny" as const, reason: REFUSED_APPROVAL };
  machine.approvals.insertRefused(requestId, seq, run.generation, REFUSED_APPROVAL, machine.now);
  machine.control(run.epoch, ControlEventType.APPROVAL_EXPIRED, fields);
  machine.submitCommand(`~approval:${requestId}`, "approval", fields, undefined, run.generation);
}

function noticeSession(machine: RunnerEventHost, data: unknown): void {
  const session = data as { provider?: unknown; id?: unknown } | null | undefined;
  const { provider, id } = session ?? {};
  if (typeof provider !== "string" || typeof id !== "string" || provider === "" || id === "") return;
  if (provider.length > 200 || id.length > 1000) return;
  machine.store.setNativeSession({ provider, id });
}
