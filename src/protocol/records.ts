import { z } from "zod";
import { Placement } from "./pool-api.ts";
import { Generation, RecoveryMode, RunId, RunnerOutcome, RunStatus, Timeouts } from "./run.ts";
import { Budget, RunUsage, Tag, UsageTotals } from "./usage.ts";

// What the API answers with: the records a run keeps, as zod schemas so the OpenAPI document and
// the TypeScript types come from one definition. A `.meta({ id })` names a component in the
// document. Objects the server sends are not strict: a client ignores fields it does not know,
// so the server can add some (the tests close them, so an undocumented field still fails).
// A nullable record is `z.union([X, z.null()])`, not `X.nullable()`: the document generator
// turns the latter into an `allOf` that refuses null.

const Timestamp = z.iso.datetime().describe("ISO-8601, UTC");

export const Outcome = z
  .object({ ...RunnerOutcome.shape, status: z.enum(["succeeded", "failed", "cancelled", "timed_out"]) })
  .meta({
    id: "Outcome",
    description:
      "How a run ended. Error codes the object itself writes: claim_timeout, runner_lost, idle_timeout, run_deadline, cancelled, cancel_unconfirmed, recovery_declined, quota_exceeded, budget_exceeded (cancelled: its usage passed its budget).",
  });
export type Outcome = z.infer<typeof Outcome>;

export const EventSource = z.enum(["runner", "control"]);
export type EventSource = z.infer<typeof EventSource>;

export const RunEvent = z
  .object({
    seq: z.number().int().min(1).describe("Position in the log: starts at 1, no gaps; the viewers' cursor"),
    epoch: z.number().int().min(0),
    source: EventSource,
    sourceSeq: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("The runner's sequence number within its generation (runner events only)"),
    generation: Generation.optional().describe("The agent generation that sent it (runner events only)"),
    type: z.string(),
    data: z.unknown(),
    time: Timestamp.describe("When the run object stored it (ISO-8601, UTC)"),
    agentTime: Timestamp.optional().describe(
      "Runner events: when the agent wrote it, as the runner journaled it; after an outage the events journaled meanwhile keep their own times while `time` is when they arrived",
    ),
  })
  .meta({ id: "RunEvent", description: "One event of a run's log" });
export type RunEvent = z.infer<typeof RunEvent>;

const Decision = z.enum(["approve", "deny"]);

export const COMMAND_STATES = ["queued", "delivered", "applied", "rejected", "unknown"] as const;
export const CommandState = z.enum(COMMAND_STATES);
export type CommandState = z.infer<typeof CommandState>;
export const CommandType = z.enum(["input", "interrupt", "cancel", "approval"]);
export type CommandType = z.infer<typeof CommandType>;

export const CommandRecord = z
  .object({
    commandId: z.string(),
    controllerSeq: z.number().int().min(1),
    type: CommandType,
    text: z.string().optional(),
    requestId: z.string().optional(),
    decision: Decision.optional(),
    reason: z.string().optional(),
    state: CommandState,
    generation: Generation.optional().describe(
      "The generation it is bound to: the one it names, else the first it was delivered to",
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: "CommandRecord", description: "A command as the run stores it" });
export type CommandRecord = z.infer<typeof CommandRecord>;

export const ApprovalState = z.enum(["pending", "approved", "denied", "expired"]);
export type ApprovalState = z.infer<typeof ApprovalState>;

export const ApprovalRecord = z
  .object({
    requestId: z.string(),
    state: ApprovalState,
    requestedSeq: z.number().int().min(1),
    data: z.unknown(),
    decision: Decision.optional(),
    reason: z.string().optional(),
    createdAt: Timestamp,
    expiresAt: Timestamp.optional(),
    resolvedAt: Timestamp.optional(),
  })
  .meta({ id: "ApprovalRecord", description: "A tool call waiting for, or given, an operator's decision" });
export type ApprovalRecord = z.infer<typeof ApprovalRecord>;

export const ApprovalSummary = z
  .object({
    requestId: z.string(),
    state: ApprovalState,
    requestedSeq: z.number().int().min(1),
    createdAt: Timestamp,
    expiresAt: Timestamp.optional(),
    bytes: z.number().int().min(0).describe("Size of the request (`data`) as JSON"),
    truncated: z
      .boolean()
      .describe("The request is too large to travel here: GET /v1/runs/{runId}/approvals/{requestId} has it"),
    data: z.unknown().describe("The request when it is small (2 KiB of JSON at most); null when `truncated`"),
  })
  .meta({ id: "ApprovalSummary", description: "A pending approval as the run record lists it" });
export type ApprovalSummary = z.infer<typeof ApprovalSummary>;

export const NativeSession = z
  .object({ provider: z.string(), id: z.string() })
  .meta({ id: "NativeSession", description: "The provider's own session (codex thread, claude session)" });
export type NativeSession = z.infer<typeof NativeSession>;

export const CheckpointInfo = z
  .object({
    digest: z.string().describe("sha256:<hex> of the bytes"),
    generation: Generation,
    sourceSeq: z.number().int().min(0).describe("The last runner event of that generation it covers"),
    bytes: z.number().int().min(0),
    createdAt: Timestamp,
  })
  .meta({
    id: "CheckpointInfo",
    description: "The run's checkpoint: the provider's session files, as the bridge packed them",
  });
export type CheckpointInfo = z.infer<typeof CheckpointInfo>;

export const RecoveryInfo = z
  .object({
    mode: RecoveryMode,
    reason: z.string(),
    since: Timestamp,
    deadline: Timestamp.describe("When the run fails (runner_lost) unless it is recovered"),
  })
  .meta({ id: "RecoveryInfo", description: "Why and how a lost run may be recovered (status `recovering` only)" });
export type RecoveryInfo = z.infer<typeof RecoveryInfo>;

export const RecoveryPolicy = z
  .object({
    mode: z.enum(["auto", "manual"]),
    maxRecoveries: z.number().int().min(0),
    automaticRecoveries: z.number().int().min(0).describe("How many the pool has made so far"),
  })
  .meta({ id: "RecoveryPolicy", description: "How a pool run lost with its host is recovered" });
export type RecoveryPolicy = z.infer<typeof RecoveryPolicy>;

export const RunRecord = z
  .object({
    id: RunId,
    status: RunStatus,
    epoch: z.number().int().min(0),
    createdAt: Timestamp,
    claimedAt: z.union([Timestamp, z.null()]),
    finishedAt: z.union([Timestamp, z.null()]),
    lastSeq: z.number().int().min(0),
    highestSourceSeq: z.number().int().min(0).describe("Of the current generation"),
    generation: Generation,
    nativeSession: z.union([NativeSession, z.null()]),
    checkpoint: z.union([CheckpointInfo, z.null()]),
    recovery: z.union([RecoveryInfo, z.null()]),
    outcome: z.union([Outcome, z.null()]),
    agent: z.unknown(),
    input: z.unknown(),
    timeouts: Timeouts,
    retentionMs: z.number().int().min(1),
    metadata: z.record(z.string(), z.unknown()),
    tags: z.array(Tag),
    usage: RunUsage,
    budget: z.union([Budget, z.null()]),
    pendingApprovals: z
      .array(ApprovalSummary)
      .describe("At most APPROVALS_PENDING_MAX; the full request of each is behind its own route"),
    runner: z.object({
      id: z.union([z.string(), z.null()]),
      connected: z.boolean(),
      leaseExpiresAt: z.union([Timestamp, z.null()]),
    }),
    queue: z.union([z.string(), z.null()]).describe("The queue of a pool run (agent names a profile); else null"),
    recoveryPolicy: z.union([RecoveryPolicy, z.null()]),
    ...Placement.shape,
  })
  .meta({ id: "RunRecord", description: "A run as the API shows it" });
export type RunRecord = z.infer<typeof RunRecord>;

export const RunListing = z
  .object({
    runId: RunId,
    status: RunStatus,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    agent: z.union([z.string(), z.null()]).describe("The agent's name: a string agent, or its `name`"),
    queue: z.union([z.string(), z.null()]).describe("A pool run's queue; null for a run started by hand"),
    poolHost: z
      .union([z.string(), z.null()])
      .describe("The pool host holding the run, or the last that did; null while queued and for other runs"),
    tags: z.array(Tag),
    usage: UsageTotals.omit({ model: true }).describe("The run's usage totals, as last synced to the list"),
  })
  .meta({ id: "RunListing", description: "One run in a tenant's list" });
export type RunListing = z.infer<typeof RunListing>;
