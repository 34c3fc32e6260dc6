import { z } from "zod";
import {
  ApprovalRecord,
  CheckpointInfo,
  CommandRecord,
  NativeSession,
  RunEvent,
  RunListing,
  RunRecord,
} from "./records.ts";
import { Generation, RecoveryMode, RunId, RunStatus } from "./run.ts";

// The bodies of the API's answers, one schema each (see records.ts for the conventions).

export const CreatedRun = z
  .object({
    run: RunRecord,
    runnerToken: z.string().describe("For the runner WebSocket only"),
    runnerTokenId: z.string().describe("The runner token's id, to revoke it"),
    viewerToken: z.string().describe("Reads the run; cannot send commands"),
    viewerTokenId: z.string().describe("The viewer token's id, to revoke it"),
  })
  .meta({ id: "CreatedRun" });
export type CreatedRun = z.infer<typeof CreatedRun>;

export const RunsPage = z
  .object({
    runs: z.array(RunListing),
    nextCursor: z.union([z.string(), z.null()]).describe("Pass back as `cursor` for the next page; null on the last"),
  })
  .meta({ id: "RunsPage", description: "A page of the tenant's runs, newest first" });
export type RunsPage = z.infer<typeof RunsPage>;

export const EventsPage = z
  .object({
    events: z.array(RunEvent),
    nextAfter: z.number().int().min(0).describe("Pass as the next `after`"),
    hasMore: z.boolean(),
    status: RunStatus,
  })
  .meta({ id: "EventsPage", description: "A page of a run's event log" });
export type EventsPage = z.infer<typeof EventsPage>;

/** `command` is null only for a repeated cancel of a run that was cancelled without one. */
const SubmittedCommand = {
  created: z.boolean().describe("false for a repeat of an earlier identical request"),
  command: z.union([CommandRecord, z.null()]),
};

export const CommandAccepted = z.object(SubmittedCommand).meta({ id: "CommandAccepted" });
export type CommandAccepted = z.infer<typeof CommandAccepted>;

export const CancelAccepted = z.object({ ...SubmittedCommand, run: RunRecord }).meta({ id: "CancelAccepted" });
export type CancelAccepted = z.infer<typeof CancelAccepted>;

export const ApprovalAccepted = z
  .object({ created: z.boolean(), approval: ApprovalRecord })
  .meta({ id: "ApprovalAccepted" });
export type ApprovalAccepted = z.infer<typeof ApprovalAccepted>;

export const MintedToken = z
  .object({
    token: z.string(),
    tokenId: z.string().describe("Names the token in `DELETE /v1/runs/{runId}/tokens/{tokenId}`"),
    role: z.enum(["runner", "viewer"]),
    interact: z.boolean(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: "MintedToken" });
export type MintedToken = z.infer<typeof MintedToken>;

export const RevokedToken = z
  .object({ tokenId: z.string(), revokedAt: z.iso.datetime().describe("When it was first revoked") })
  .meta({ id: "RevokedToken" });
export type RevokedToken = z.infer<typeof RevokedToken>;

export const RevokedTokens = z
  .object({
    revoked: z.number().int().min(0).describe("How many live tokens with ids this revoked"),
    revokedAt: z.iso.datetime(),
  })
  .meta({ id: "RevokedTokens", description: "Every token of the run ended, those minted before ids included" });
export type RevokedTokens = z.infer<typeof RevokedTokens>;

export const PurgedRun = z.object({ status: RunStatus.describe("How the run ended") }).meta({ id: "PurgedRun" });
export type PurgedRun = z.infer<typeof PurgedRun>;

export const RunnerPreflight = z
  .object({ runId: RunId, status: RunStatus, epoch: z.number().int().min(0) })
  .meta({ id: "RunnerPreflight", description: "What a runner learns before attaching" });
export type RunnerPreflight = z.infer<typeof RunnerPreflight>;

export const RecoverAccepted = z
  .object({
    created: z.boolean().describe("false for a repeat of the decision with the same commandId"),
    decision: z.object({ action: z.enum(["resume", "restart", "fail"]), commandId: z.string() }),
    run: RunRecord,
  })
  .meta({ id: "RecoverAccepted", description: "The decision that settled the recovery, and the run after it" });
export type RecoverAccepted = z.infer<typeof RecoverAccepted>;

export const CheckpointStored = z
  .object({ checkpoint: CheckpointInfo })
  .meta({ id: "CheckpointStored", description: "The run's checkpoint after the upload" });
export type CheckpointStored = z.infer<typeof CheckpointStored>;

export const RecoveryState = z
  .object({
    status: RunStatus,
    generation: Generation.describe("The current generation; a resume claims generation + 1"),
    mode: z.union([RecoveryMode, z.null()]).describe("null unless recovering"),
    nativeSession: z.union([NativeSession, z.null()]),
    checkpoint: z.union([CheckpointInfo, z.null()]),
  })
  .meta({ id: "RecoveryState", description: "What `runner-bridge resume` reads before it claims" });
export type RecoveryState = z.infer<typeof RecoveryState>;
