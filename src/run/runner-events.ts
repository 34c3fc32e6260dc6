import { AgentEventType } from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";
import type { UsageHost } from "./usage.ts";
import { notifyWebhooks, type WebhookHost } from "./webhook-notices.ts";

// What the run makes of the events its runner stores: approvals asked, the agent's session, usage.

export type RunnerEventHost = Pick<RunMachine, "approvals" | "mustLoad" | "setNativeSession" | "setStatus"> &
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
  if (machine.usage.notice(event)) return;
  if (event.type === AgentEventType.AGENT_SESSION) {
    noticeSession(machine, event.data);
    return;
  }
  if (event.type !== AgentEventType.APPROVAL_REQUESTED) return;
  const data = event.data as { requestId?: unknown } | null | undefined;
  const requestId = data?.requestId;
  if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > 200) return;
  const run = machine.mustLoad();
  // A new approval makes the run wait; one refused (APPROVALS_PENDING_MAX) or known changes nothing here.
  if (machine.approvals.ask(run, requestId, seq, event.data) !== "opened") return;
  if (run.status === "running") machine.setStatus("waiting");
  notifyWebhooks(machine, "run.waiting", requestId);
}

function noticeSession(machine: RunnerEventHost, data: unknown): void {
  const session = data as { provider?: unknown; id?: unknown } | null | undefined;
  const { provider, id } = session ?? {};
  if (typeof provider !== "string" || typeof id !== "string" || provider === "" || id === "") return;
  if (provider.length > 200 || id.length > 1000) return;
  machine.setNativeSession({ provider, id });
}
