import type { RecordSources } from "./run-record.ts";
import { createHash } from "node:crypto";
import { BUDGET_EXCEEDED, type Outcome, type RunRecord, type WebhookEventType } from "../protocol/index.ts";
import { runRecord } from "./run-record.ts";
import type { RunMachine } from "./run-machine.ts";

/** What webhook notices need: the run record they carry, and the outbox. */
export type WebhookHost = Pick<RunMachine, "mustLoad" | "now" | "outbox"> & RecordSources;

// What a run tells its tenant's webhooks (src/objects/webhook-object.ts): one outbox row per
// (run, event), committed with the status change it reports, so a crash after the commit loses
// nothing and a repeat is recognised by its key.

/** The outbox target of the tenant's webhook object (src/pools/deliver.ts). */
export const WEBHOOK_TARGET = "webhooks";

export interface WebhookNotice {
  tenant: string;
  runId: string;
  type: WebhookEventType;
  /** The message's `webhook-id`: the same for every attempt and redelivery of this (run, event). */
  webhookId: string;
  /** When the change happened (ms). */
  occurredAt: number;
  /** The run's record as the change left it. */
  run: RunRecord;
}

/** A stable message id from (tenant, run, event, occurrence): equal inputs, equal id, after any crash. */
export function webhookMessageId(tenant: string, runId: string, key: string): string {
  const digest = createHash("sha256")
    .update(JSON.stringify([tenant, runId, key]))
    .digest("hex");
  return `msg_${digest.slice(0, 32)}`;
}

/**
 * Adds the notice of `type` to the outbox. `occurrence` tells one occurrence of the type from
 * another in the same run: the approval's request id for run.waiting, the recovery episode for
 * run.recovering; terminal events happen once.
 */
export function notifyWebhooks(machine: WebhookHost, type: WebhookEventType, occurrence = "once"): void {
  const run = machine.mustLoad();
  const key = `${WEBHOOK_TARGET}:${type}:${occurrence}`;
  const notice: WebhookNotice = {
    tenant: run.tenant,
    runId: run.runId,
    type,
    webhookId: webhookMessageId(run.tenant, run.runId, key),
    occurredAt: machine.now,
    run: runRecord(machine),
  };
  machine.outbox.add(WEBHOOK_TARGET, key, notice);
}

/** The events a run's end sends: its status, and run.budget_exceeded first when a budget ended it. */
export function notifyRunEnded(machine: WebhookHost, outcome: Outcome): void {
  if (outcome.error?.code === BUDGET_EXCEEDED) notifyWebhooks(machine, "run.budget_exceeded");
  notifyWebhooks(machine, `run.${outcome.status}`);
}
