import type { QuotaHost } from "./quota.ts";
import type { UsageHost } from "./usage.ts";
import {
  type Fenced,
  fenced,
  type CommandRecord,
  fail,
  isTerminal,
  ok,
  type Result,
  type RunnerEvent,
  type RunnerOutcome,
  type RunStatus,
} from "../protocol/index.ts";
import { canonicalJson } from "./canonical.ts";
import { type EventVerdict, judgeRunnerEvent } from "./judge-event.ts";
import { exceedQuota, overQuota } from "./quota.ts";
import { leaseSlice, type RunMachine } from "./run-machine.ts";
import type { RunRow } from "./store.ts";
import { noticeRunnerEvent, type RunnerEventHost } from "./runner-events.ts";

/** What the claimed runner's frames need. */
export type RunnerHost = Pick<
  RunMachine,
  "ackCommand" | "control" | "deadlines" | "effects" | "log" | "mustLoad" | "now" | "renewLease" | "terminalize"
> &
  QuotaHost &
  UsageHost &
  RunnerEventHost;

// What the runner holding the current claim does to the run, one frame at a time.

/**
 * Fenced when the frame's epoch is not the current claim's, or the claim lapsed when the run went
 * recovering: nothing was done. Null when `epoch` holds the run.
 */
function lapsed(run: RunRow, epoch: number): Fenced | null {
  if (epoch !== run.epoch)
    return fenced(run.epoch, `epoch ${epoch} does not hold the run (the current claim is epoch ${run.epoch})`);
  return run.status === "recovering" ? fenced(run.epoch, "the claim lapsed when the run went recovering") : null;
}

export type BatchVerdict =
  | Fenced
  | { kind: "terminal"; status: RunStatus }
  /** The batch would pass the run's byte quota: nothing stored, the run failed `quota_exceeded`. */
  | { kind: "quota_exceeded" }
  /** Stored, and its usage passed the run's budget: the run is cancelled `budget_exceeded` (usage.ts). */
  | { kind: "budget_exceeded" }
  /** Stored what was new; `stoppedAt` is the gap or conflict that ended the batch early. */
  | { kind: "stored"; highestSourceSeq: number; stoppedAt: Extract<EventVerdict, { kind: "gap" | "conflict" }> | null };

/**
 * Stores a runner's batch of `generation`: each event judged in memory against that generation's
 * state as the batch advances (judge-event.ts), then everything new written in one pass. Renews
 * the lease and the idle deadline: a batch that stores events leaves their rows alone, since the
 * alarm judges a due one against the last stored runner event (alarm.ts), so it writes its block
 * and nothing else; one that stores nothing moves them in their rows, as before.
 */
export function storeBatch(
  machine: RunnerHost,
  epoch: number,
  generation: number,
  events: RunnerEvent[],
): BatchVerdict {
  const run = machine.mustLoad();
  const stale =
    lapsed(run, epoch) ??
    (generation === run.generation
      ? null
      : fenced(run.epoch, `generation ${generation} is not the run's current generation (${run.generation})`));
  if (stale) return stale;
  if (isTerminal(run.status)) return { kind: "terminal", status: run.status };
  // A stalled run resumes; its lease row, gone when it stalled, is stored again.
  const renewed = run.status === "stalled" || machine.deadlines.leaseExpiresAt() === null;
  if (renewed) machine.renewLease(run, 0);
  let runner = machine.log.runnerState(generation);
  const accepted = new Map<number, RunnerEvent>();
  const stored = (sourceSeq: number) => accepted.get(sourceSeq) ?? machine.log.runnerEvent(generation, sourceSeq);
  let stoppedAt: Extract<EventVerdict, { kind: "gap" | "conflict" }> | null = null;
  for (const event of events) {
    const verdict = judgeRunnerEvent(runner, epoch, generation, event, stored);
    if (verdict.kind === "duplicate") continue;
    if (verdict.kind === "fenced") return verdict;
    if (verdict.kind !== "accepted") {
      stoppedAt = verdict;
      break;
    }
    runner = verdict.state;
    accepted.set(event.sourceSeq, event);
  }
  const drafts = [...accepted.values()].map((event) => ({
    epoch,
    sourceSeq: event.sourceSeq,
    generation,
    type: event.type,
    data: event.data ?? null,
    time: machine.now,
    agentTime: parseTime(event.time),
  }));
  if (drafts.length > 0 && runner) {
    const events = machine.log.toEvents(drafts);
    if (overQuota(machine, events)) {
      exceedQuota(machine);
      return { kind: "quota_exceeded" };
    }
    const appended = machine.log.appendEvents(drafts, { generation, state: runner }, events);
    machine.effects.appended.push(...appended);
    for (const event of appended) noticeRunnerEvent(machine, event.seq, event);
    if (machine.usage.enforceBudget()) return { kind: "budget_exceeded" };
  } else {
    if (!renewed) machine.renewLease(run, 0);
    machine.deadlines.armIdle(machine.now + run.timeouts.idleMs);
  }
  return { kind: "stored", highestSourceSeq: runner?.lastSeq ?? run.highestSourceSeq, stoppedAt };
}

/** A heartbeat: renews the lease (and resumes a stalled run). */
export function heartbeat(machine: RunnerHost, epoch: number): { kind: "renewed" } | Fenced {
  const run = machine.mustLoad();
  const stale = lapsed(run, epoch);
  if (stale) return stale;
  if (!isTerminal(run.status)) machine.renewLease(run, leaseSlice(run.timeouts));
  return { kind: "renewed" };
}

/** The runner's outcome. Repeating it is harmless; a different outcome for an ended run is refused. */
export function completeRun(
  machine: RunnerHost,
  epoch: number,
  outcome: RunnerOutcome,
): Result<{ kind: "completed"; status: RunStatus } | Fenced> {
  const run = machine.mustLoad();
  const stale = lapsed(run, epoch);
  if (stale) return ok(stale);
  if (isTerminal(run.status)) {
    if (run.outcome && canonicalJson(run.outcome) === canonicalJson(outcome)) {
      return ok({ kind: "completed", status: run.status });
    }
    return fail("outcome_conflict", `run already ended as ${run.status}; a different outcome changes nothing`);
  }
  machine.terminalize(outcome, false);
  return ok({ kind: "completed", status: outcome.status });
}

/** The runner's report on one command: delivered, then applied or rejected, never back. */
export function ackCommand(
  machine: RunnerHost,
  epoch: number,
  ack: { controllerSeq: number; commandId: string; state: "delivered" | "applied" | "rejected" },
): Result<{ kind: "acked"; command: CommandRecord } | Fenced> {
  const run = machine.mustLoad();
  const stale = lapsed(run, epoch);
  if (stale) return ok(stale);
  return machine.ackCommand(epoch, ack);
}

/** The last millisecond of year 9999: past it toISOString leaves the ISO-8601 form. */
const LATEST_TIME = 253_402_300_799_999;

/** A runner's time as epoch ms, or null when it is absent, unparseable or outside 1970..9999. */
function parseTime(time: string | undefined): number | null {
  if (time === undefined) return null;
  const ms = Date.parse(time);
  return Number.isFinite(ms) && ms >= 0 && ms <= LATEST_TIME ? ms : null;
}
