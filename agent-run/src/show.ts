/** Readable renderings of a run record and of raw log events. */
import type { RunEvent, RunRecord, Timeouts } from "../../src/protocol/index.ts";
import { clock, compact, duration, fields, type Paint, relative } from "./format.ts";
import { finishedLine } from "./transcript.ts";
import { budgetText, usageText } from "./usage-text.ts";

function when(iso: string | null, now: number): string {
  return iso === null ? "-" : `${iso} (${relative(iso, now)})`;
}

const TIMEOUT_LABELS: [keyof Timeouts, string][] = [
  ["claimMs", "claim"],
  ["heartbeatMs", "heartbeat"],
  ["takeoverMs", "takeover"],
  ["approvalMs", "approval"],
  ["idleMs", "idle"],
  ["runMs", "run"],
  ["recoverMs", "recover"],
];

export function showRun(run: RunRecord, p: Paint, now = Date.now()): string {
  const runner = run.runner.id
    ? `${run.runner.id} · ${run.runner.connected ? "connected" : "disconnected"}${
        run.runner.leaseExpiresAt ? ` · lease until ${run.runner.leaseExpiresAt}` : ""
      }`
    : "none yet";
  const pairs: [string, string][] = [
    ["run", p.bold(run.id)],
    ["status", statusText(run, p)],
    ["created", when(run.createdAt, now)],
    ["claimed", when(run.claimedAt, now)],
    ["finished", when(run.finishedAt, now)],
    ["epoch", String(run.epoch)],
    ["events", `${run.lastSeq} (${run.highestSourceSeq} from the runner)`],
    ["runner", runner],
    ["generation", generationText(run)],
    [
      "checkpoint",
      run.checkpoint
        ? `generation ${run.checkpoint.generation} up to #${run.checkpoint.sourceSeq} · ${run.checkpoint.bytes} bytes · ${when(run.checkpoint.createdAt, now)}`
        : "none",
    ],
    ["usage", usageText(run.usage.total)],
    ["budget", budgetText(run.budget)],
    ["tags", run.tags.length > 0 ? run.tags.join(" ") : "none"],
    ["agent", compact(run.agent ?? null, 200)],
    ["input", compact(run.input ?? null, 200)],
    ["metadata", compact(run.metadata, 200)],
    ["timeouts", TIMEOUT_LABELS.map(([key, label]) => `${label} ${duration(run.timeouts[key])}`).join(" · ")],
    ["retention", duration(run.retentionMs)],
  ];
  if (run.outcome) pairs.splice(2, 0, ["outcome", finishedLine(run.outcome, p).replace("run finished · ", "")]);
  let text = fields(pairs);
  if (run.recovery) {
    const { mode, reason, deadline } = run.recovery;
    text += `\n\n${p.yellow(`recovering (${mode}): ${reason}; fails (runner_lost) ${relative(deadline, now)}`)}`;
    text += `\n  ${p.dim(RECOVERY_HINT[mode].replaceAll("ID", run.id))}`;
  }
  if (run.pendingApprovals.length > 0) {
    text += `\n\n${p.yellow("pending approvals:")}`;
    for (const approval of run.pendingApprovals) {
      const expires = approval.expiresAt ? ` · expires ${relative(approval.expiresAt, now)}` : "";
      const { requestId: _, ...asked } = (approval.data ?? {}) as Record<string, unknown>;
      text += `\n  ${approval.requestId}  asked at seq ${approval.requestedSeq}${expires}  ${compact(asked, 120)}`;
      text += `\n    ${p.dim(`agent-run approve ${run.id} ${approval.requestId}   |   agent-run deny ${run.id} ${approval.requestId}`)}`;
    }
  }
  return text;
}

const RECOVERY_HINT = {
  restart: "the next `runner-bridge run` starts the agent over; or agent-run recover ID fail",
  resume:
    "`runner-bridge resume --run ID …` on a new sandbox continues the session; or agent-run recover ID restart|fail",
  ambiguous: "decide: agent-run recover ID resume|restart|fail",
} as const;

function generationText(run: RunRecord): string {
  const session = run.nativeSession ? ` · ${run.nativeSession.provider} session ${run.nativeSession.id}` : "";
  return `${run.generation}${session}`;
}

function statusText(run: RunRecord, p: Paint): string {
  if (run.status === "succeeded") return p.green(run.status);
  if (run.status === "failed" || run.status === "timed_out" || run.status === "cancelled") return p.red(run.status);
  if (run.status === "waiting") return p.yellow(`${run.status} (for an approval)`);
  if (run.status === "recovering") return p.yellow(`${run.status} (${run.recovery?.mode ?? "?"})`);
  return run.status;
}

/** One log event per line: seq, time, source, type and its data in compact JSON. */
export function eventLine(event: RunEvent, p: Paint): string {
  const source = event.source === "control" ? p.magenta("control") : "runner ";
  return `${String(event.seq).padStart(6)}  ${p.dim(clock(event.time))}  ${source}  ${event.type}  ${p.dim(
    compact(event.data ?? null, 200),
  )}`;
}
