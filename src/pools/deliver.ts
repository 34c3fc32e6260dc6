import type { Env } from "../env.ts";
import { dispatcherStub, webhookStub } from "../objects/stubs.ts";
import type { Deliver, OutboxRow } from "../run/outbox.ts";
import { DISPATCHER_TARGET, type PoolNotice } from "../run/pool-run.ts";
import { WEBHOOK_TARGET, type WebhookNotice } from "../run/webhook-notices.ts";

/** How each outbox target is reached: one entry per kind of notification a run sends. */
function targets(env: Env): Record<string, (row: OutboxRow) => Promise<void>> {
  return {
    [DISPATCHER_TARGET]: async (row) => {
      const notice = row.body as PoolNotice;
      const answer = await dispatcherStub(env, notice.tenant, notice.queue).notice(notice, row.seq, row.dedupeKey);
      if (!answer.ok) throw new Error(`the dispatcher refused: ${answer.message}`);
    },
    // The tenant's webhook object stores the deliveries and sends them from its own alarm.
    [WEBHOOK_TARGET]: async (row) => {
      const notice = row.body as WebhookNotice;
      const answer = await webhookStub(env, notice.tenant).notice(notice);
      if (!answer.ok) throw new Error(`the webhook object refused: ${answer.message}`);
    },
  };
}

/** The run object's outbox delivery (src/run/outbox.ts); a row for an unknown target stays and is retried. */
export function outboxDeliverer(env: Env): Deliver {
  const table = targets(env);
  return async (row) => {
    const deliver = table[row.target];
    if (!deliver) throw new Error(`no delivery for outbox target ${row.target}`);
    await deliver(row);
  };
}
