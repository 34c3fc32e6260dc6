import type { Api } from "../api.ts";
import { absoluteTime, relativeTime } from "../format.ts";
import { usePoll } from "../pools/use-poll.ts";

/** How often the list is read again: deliveries move on by the webhook object's alarm, not by the log. */
const POLL_MS = 4_000;

interface Props {
  api: Api;
  runId: string;
  now: number;
}

/**
 * The run's notifications: each webhook delivery made for it (GET /v1/runs/{runId}/notifications),
 * with its endpoint, state, attempts, the receiver's last answer and the next try.
 */
export function Notifications({ api, runId, now }: Props) {
  const { value, problem, stale } = usePoll(() => api.client.notifications(runId), POLL_MS, [api, runId]);
  const deliveries = value?.deliveries ?? [];
  return (
    <section class="notifications card" aria-label="Notifications" data-stale={stale ? "true" : undefined}>
      <h2>Notifications</h2>
      {problem ? (
        <p class="muted">Notifications unavailable: {problem.message}</p>
      ) : value === null ? (
        <p class="muted">Loading…</p>
      ) : deliveries.length === 0 ? (
        <p class="muted">No webhook notifications for this run.</p>
      ) : (
        <ul class="notification-list">
          {deliveries.map((d) => (
            <li
              key={`${d.webhookId}/${d.id}`}
              class="notification"
              data-type={d.type}
              data-state={d.state}
              data-webhook-id={d.id}
            >
              <span class="notification-type">{d.type}</span>
              <span class={`notification-state state-${d.state}`}>{d.state}</span>
              <span class="muted notification-detail">
                to <code>{d.webhookId}</code> · {d.attempts} {d.attempts === 1 ? "attempt" : "attempts"}
                {d.lastStatus !== null ? ` · last ${d.lastStatus}` : d.lastError ? ` · ${d.lastError}` : ""}
                {d.nextAttemptAt !== null && (
                  <span title={absoluteTime(d.nextAttemptAt)}> · next {relativeTime(d.nextAttemptAt, now)}</span>
                )}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
