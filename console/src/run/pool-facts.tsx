import type { RunRecord } from "../../../src/protocol/index.ts";

/** The record fields PoolFacts shows (the header lists any other field as it is). */
export const POOL_FIELDS = ["queue", "poolHost", "queuePosition", "dispatch", "recoveryPolicy"];

/** A pool run's place: its queue (and position while queued), the host holding it, its recovery policy. */
export function PoolFacts({ run }: { run: RunRecord }) {
  const placed = run;
  if (!placed.queue) return null;
  const policy = placed.recoveryPolicy;
  return (
    <>
      <div class="fact" data-fact="queue">
        <dt>Queue</dt>
        <dd>
          {placed.queue}
          {placed.queuePosition != null && <span class="muted"> · position {placed.queuePosition}</span>}
          {placed.dispatch?.reason && <span class="placement-reason">{placed.dispatch.reason}</span>}
        </dd>
      </div>
      <div class="fact" data-fact="pool-host">
        <dt>Pool host</dt>
        <dd>{placed.poolHost ? <code>{placed.poolHost}</code> : <span class="muted">none</span>}</dd>
      </div>
      {policy && (
        <div class="fact" data-fact="recovery-policy">
          <dt>Recovery</dt>
          <dd>
            {policy.mode === "auto"
              ? `automatic, ${policy.automaticRecoveries} of ${policy.maxRecoveries} used`
              : "by an operator"}
          </dd>
        </div>
      )}
    </>
  );
}
