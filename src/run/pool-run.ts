import { runnerTokenTtl } from "../auth/tokens.ts";
import {
  ControlEventType,
  type CreateRunBody,
  DEFAULT_MAX_RECOVERIES,
  DEFAULT_QUEUE,
  DEFAULT_TIMEOUTS,
  isTerminal,
  type RecoveryMode,
  type RecoveryPolicy,
  resolveTimeouts,
  type Timeouts,
} from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";
import type { RunRow } from "./store.ts";

/** What a pool run's notices and automatic recovery need. */
export type PoolRunHost = Pick<
  RunMachine,
  "control" | "countAutoRecovery" | "log" | "mustLoad" | "now" | "outbox" | "terminalize" | "tokens"
>;

// A pool run (one whose `agent` names a profile) and its dispatcher: what the run tells it, and
// the run's automatic recovery policy. Notifications go through the outbox (outbox.ts), so each
// is committed with the change it reports. The dispatcher side is src/pools/.

/** The outbox target of a run's dispatcher (src/pools/deliver.ts). */
export const DISPATCHER_TARGET = "dispatcher";

export type PoolNoticeKind = "queued" | "claimed" | "recover" | "parked" | "finished";

/** What a run tells its dispatcher; each carries what the dispatcher needs to (re)create its row. */
export interface PoolNotice {
  kind: PoolNoticeKind;
  tenant: string;
  queue: string;
  runId: string;
  profile: string;
  prompt: string | null;
  /** The run's creation time: the queue's order. */
  createdAt: number;
  /** How long a runner token minted for it should last. */
  tokenTtlMs: number;
  /** The generation concerned: for `recover`, the one the assigned bridge starts. */
  generation: number;
  /** The recovery episode: a restart that stored nothing starts no new generation. */
  episode: number;
  /** For `queued` and `recover`: how the bridge starts. */
  start?: "run" | "resume";
  /** For `parked`: why it waits. */
  reason?: string;
}

/** The pool fields a create body gives the run row. */
export function poolFields(body: CreateRunBody): Pick<RunRow, "queue" | "recoveryPolicy" | "maxRecoveries"> {
  if (typeof body.agent !== "string") return { queue: null, recoveryPolicy: null, maxRecoveries: 0 };
  return {
    queue: body.queue ?? DEFAULT_QUEUE,
    recoveryPolicy: body.recovery ?? "auto",
    maxRecoveries: body.maxRecoveries ?? DEFAULT_MAX_RECOVERIES,
  };
}

/**
 * A run's deadlines. A pool run waits in its queue for as long as it may run unless `claimMs`
 * says otherwise: waiting behind maxConcurrent, or for a host serving its profile, is what a
 * queue is for, and the record says why it waits.
 */
export function timeoutsOf(body: CreateRunBody): Timeouts {
  if (typeof body.agent !== "string" || body.timeouts?.claimMs !== undefined) return resolveTimeouts(body.timeouts);
  const runMs = body.timeouts?.runMs ?? DEFAULT_TIMEOUTS.runMs;
  return resolveTimeouts({ ...body.timeouts, claimMs: runMs });
}

export function recoveryPolicyOf(run: RunRow): RecoveryPolicy | null {
  if (run.queue === null || run.recoveryPolicy === null) return null;
  return { mode: run.recoveryPolicy, maxRecoveries: run.maxRecoveries, automaticRecoveries: run.autoRecoveries };
}

function promptOf(input: unknown): string | null {
  const prompt = (input as { prompt?: unknown } | null | undefined)?.prompt;
  return typeof prompt === "string" ? prompt : null;
}

/** Adds a notification for the run's dispatcher to the outbox; nothing for a run started by hand. */
export function notifyDispatcher(
  machine: PoolRunHost,
  kind: PoolNoticeKind,
  fields: { generation?: number; start?: "run" | "resume"; reason?: string } = {},
): void {
  const run = machine.mustLoad();
  if (run.queue === null || typeof run.agent !== "string") return;
  const notice: PoolNotice = {
    kind,
    tenant: run.tenant,
    queue: run.queue,
    runId: run.runId,
    profile: run.agent,
    prompt: promptOf(run.input),
    createdAt: run.createdAt,
    tokenTtlMs: runnerTokenTtl(run.timeouts),
    generation: fields.generation ?? run.generation,
    episode: run.recoveryEpisode,
    ...(fields.start === undefined ? {} : { start: fields.start }),
    ...(fields.reason === undefined ? {} : { reason: fields.reason }),
  };
  // Idempotent by (run, generation, status), and the episode for recoveries (see PoolNotice).
  const key = `${DISPATCHER_TARGET}:${kind}:${notice.generation}:${kind === "claimed" ? run.epoch : notice.episode}`;
  machine.outbox.add(DISPATCHER_TARGET, key, notice);
}

/** The dispatch of a recovery decided for a pool run (automatically, or by an operator). */
export function dispatchRecovery(machine: PoolRunHost, run: RunRow, mode: "restart" | "resume"): void {
  const generation = mode === "resume" || machine.log.hasRunnerEvents() ? run.generation + 1 : run.generation;
  notifyDispatcher(machine, "recover", { generation, start: mode === "resume" ? "resume" : "run" });
}

/**
 * A pool run just entered `recovering`. With policy `auto` and a mode the evidence allows
 * (restart or resume) the pool recovers it, up to `maxRecoveries` times; past that it fails
 * `runner_lost`. `ambiguous`, or policy `manual`, waits for an operator's decision, which is then
 * dispatched the same way (src/run/recovery-decision.ts).
 */
export function applyRecoveryPolicy(machine: PoolRunHost, mode: RecoveryMode, reason: string): void {
  const run = machine.mustLoad();
  if (run.queue === null) return;
  if (run.recoveryPolicy !== "auto" || mode === "ambiguous") {
    const why = run.recoveryPolicy === "auto" ? reason : "the run's recovery policy is manual";
    notifyDispatcher(machine, "parked", { reason: `waiting for an operator's recover decision: ${why}` });
    return;
  }
  if (run.autoRecoveries >= run.maxRecoveries) {
    const losses = run.autoRecoveries + 1;
    const made = run.autoRecoveries === 1 ? "1 automatic recovery" : `${run.autoRecoveries} automatic recoveries`;
    const message = `the run was lost ${losses} ${losses === 1 ? "time" : "times"}; the pool gave up after ${made} (maxRecoveries ${run.maxRecoveries})`;
    machine.terminalize({ status: "failed", error: { code: "runner_lost", message } }, true);
    return;
  }
  machine.countAutoRecovery();
  machine.control(run.epoch, ControlEventType.RUN_RECOVERY_AUTOMATIC, {
    attempt: run.autoRecoveries + 1,
    maxRecoveries: run.maxRecoveries,
    mode,
    generation: run.generation,
  });
  dispatchRecovery(machine, run, mode);
}

/** What a run answers its dispatcher taking back a lapsed assignment (src/pools/dispatch.ts). */
export type TakeBack = "claimed" | "finished" | "taken_back";

/**
 * Decides, in the run's own transaction, what becomes of an assignment whose lease lapsed: a run
 * claimed meanwhile keeps its bridge, an ended one needs nothing, and otherwise the assignment's
 * runner token is revoked, so the host it went to can no longer claim once the run is offered
 * elsewhere. Being one transaction, a claim lands either before it (kept) or after (refused).
 */
export function takeBackAssignment(machine: PoolRunHost, tokenId: string | null): TakeBack {
  const { status } = machine.mustLoad();
  if (isTerminal(status)) return "finished";
  if (status === "running" || status === "waiting" || status === "stalled") return "claimed";
  // A token already gone (expired, or revoked with all of the run's) can claim nothing either.
  if (tokenId !== null) machine.tokens.revoke(tokenId);
  return "taken_back";
}
