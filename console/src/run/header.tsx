import type { ComponentChildren } from "preact";
import type { RunRecord } from "../../../src/protocol/index.ts";
import { absoluteTime, duration, relativeTime } from "../format.ts";
import { StatusBadge } from "../status.tsx";
import type { LiveState } from "./feed.ts";
import { costText, tokensText } from "../usage.ts";
import { POOL_FIELDS, PoolFacts } from "./pool-facts.tsx";

const LIVE_LABEL: Record<LiveState, string> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting…",
  ended: "Ended",
  stopped: "Disconnected",
};

export function LiveIndicator({ state }: { state: LiveState }) {
  return (
    <span class={`live live-${state}`} role="status" data-live={state}>
      <span class="live-dot" aria-hidden="true" />
      {LIVE_LABEL[state]}
    </span>
  );
}

/** Fields of the run record this header knows; any other scalar field is listed as it is. */
const KNOWN_FIELDS = new Set([
  "id",
  "status",
  "epoch",
  "createdAt",
  "claimedAt",
  "finishedAt",
  "lastSeq",
  "highestSourceSeq",
  "outcome",
  "agent",
  "input",
  "timeouts",
  "retentionMs",
  "metadata",
  "pendingApprovals",
  "runner",
  "generation",
  "nativeSession",
  "checkpoint",
  "recovery",
  "usage",
  "budget",
  "tags",
  ...POOL_FIELDS,
]);

function extraFields(run: RunRecord): [string, string][] {
  return Object.entries(run as unknown as Record<string, unknown>)
    .filter(([name, value]) => !KNOWN_FIELDS.has(name) && value !== null && value !== undefined)
    .map(([name, value]): [string, string] => [name, typeof value === "object" ? JSON.stringify(value) : String(value)])
    .filter(([, value]) => value.length <= 200);
}

function kibibytes(bytes: number): string {
  return bytes < 1024 * 1024
    ? `${Math.max(1, Math.round(bytes / 1024))} KiB`
    : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function When({ iso, now }: { iso: string | null; now: number }) {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={absoluteTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}

function Fact({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

export function RunHeader(props: { run: RunRecord; live: LiveState; now: number; actions: ComponentChildren }) {
  const { run, now } = props;
  const runner = run.runner;
  const ended = run.finishedAt !== null;
  const agent = typeof run.agent === "string" ? run.agent : (run.agent as { name?: unknown } | null)?.name;
  return (
    <header class="run-header card">
      <div class="run-title">
        <div>
          <p class="eyebrow">Run{typeof agent === "string" ? ` · ${agent}` : ""}</p>
          <h1 class="run-id">{run.id}</h1>
        </div>
        <div class="run-badges">
          <StatusBadge status={run.status} />
          <LiveIndicator state={props.live} />
        </div>
        <div class="run-actions">{props.actions}</div>
      </div>
      <dl class="facts">
        <Fact label="Epoch">
          {run.epoch} <span class="muted">{run.epoch === 1 ? "claim" : "claims"}</span>
        </Fact>
        <Fact label="Runner">
          {runner.id ? <code>{runner.id}</code> : <span class="muted">none yet</span>}{" "}
          <span class={`pill ${runner.connected ? "pill-good" : "pill-muted"}`}>
            {runner.connected ? "connected" : "not connected"}
          </span>
        </Fact>
        <Fact label="Lease expires">
          {ended ? <span class="muted">—</span> : <When iso={runner.leaseExpiresAt} now={now} />}
        </Fact>
        <Fact label="Created">
          <When iso={run.createdAt} now={now} />
        </Fact>
        <Fact label="Claimed">
          <When iso={run.claimedAt} now={now} />
        </Fact>
        <Fact label="Finished">
          <When iso={run.finishedAt} now={now} />
        </Fact>
        <Fact label={ended ? "Duration" : "Running for"}>
          {duration(run.createdAt, run.finishedAt ?? new Date(now).toISOString())}
        </Fact>
        <Fact label="Events">{run.lastSeq}</Fact>
        <Fact label="Tokens">{tokensText(run.usage.total)}</Fact>
        <Fact label="Cost">
          {costText(run.usage.total.costUsd)}
          {run.budget && (
            <span class="muted">
              {" "}
              of budget{run.budget.maxCostUsd !== undefined ? ` ${costText(run.budget.maxCostUsd)}` : ""}
              {run.budget.maxTokens !== undefined ? ` · ${run.budget.maxTokens.toLocaleString("en-US")} tokens` : ""}
            </span>
          )}
        </Fact>
        {run.tags.length > 0 && <Fact label="Tags">{run.tags.join(" ")}</Fact>}
        <Fact label="Generation">
          {run.generation}
          {run.nativeSession && (
            <>
              {" "}
              <span class="muted">{run.nativeSession.provider}</span> <code>{run.nativeSession.id}</code>
            </>
          )}
        </Fact>
        <Fact label="Checkpoint">
          {run.checkpoint ? (
            <span title={run.checkpoint.digest}>
              g{run.checkpoint.generation} up to #{run.checkpoint.sourceSeq}, {kibibytes(run.checkpoint.bytes)},{" "}
              <When iso={run.checkpoint.createdAt} now={now} />
            </span>
          ) : (
            <span class="muted">none</span>
          )}
        </Fact>
        <PoolFacts run={run} />
        {extraFields(run).map(([name, value]) => (
          <Fact key={name} label={name}>
            <code>{value}</code>
          </Fact>
        ))}
      </dl>
      {run.outcome && (
        <div class={`outcome ${run.outcome.error || run.outcome.status !== "succeeded" ? "outcome-bad" : ""}`}>
          <strong>Outcome:</strong> <StatusBadge status={run.outcome.status} />
          {run.outcome.exitCode !== undefined && <span class="muted"> exit code {run.outcome.exitCode}</span>}
          {run.outcome.error && (
            <p class="outcome-error">
              {/* A code or first word that only repeats the status ("cancelled") says nothing the badge does not. */}
              {run.outcome.error.code !== run.outcome.status && <code>{run.outcome.error.code}</code>}{" "}
              {run.outcome.error.message.replace(new RegExp(`^${run.outcome.status}\\s+`, "i"), "")}
            </p>
          )}
        </div>
      )}
    </header>
  );
}
