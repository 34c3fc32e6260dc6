import { z } from "zod";
import { Generation, RunId } from "./run.ts";

// Runner pools: sandbox hosts that dial in over one WebSocket per host and take the runs their
// tenant's dispatcher assigns them (docs/PROTOCOL.md, "Pools"). The host runs each assignment as a
// runner-bridge session of its own; the run's own runner socket, claim epoch and generations are
// unchanged, so the pool protocol only decides *who* starts a bridge, never what a run stores.

const NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const NAME_MESSAGE = "must match [a-z0-9][a-z0-9._-]{0,63}";

/**
 * Close codes of a pool socket: its key was revoked; the same hostId connected again; the host
 * sent nothing for three heartbeat intervals (a dead connection: reconnect).
 */
export const POOL_CLOSE_REVOKED = 4003;
export const POOL_CLOSE_REPLACED = 4004;
export const POOL_CLOSE_SILENT = 4005;

/** A queue of a tenant's runs; one dispatcher per (tenant, queue). */
export const QueueName = z.string().regex(NAME_PATTERN, `a queue name ${NAME_MESSAGE}`);
export const DEFAULT_QUEUE = "default";

/** An agent profile's name: what a run names as `agent`, defined on the pool host only. */
export const ProfileName = z.string().regex(NAME_PATTERN, `a profile name ${NAME_MESSAGE}`);

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name");

/**
 * One agent profile as a pool host's agents file defines it. An API caller only ever names a
 * profile: the command line is the host's, never the caller's.
 */
export const AgentProfile = z
  .object({
    adapter: z.enum(["ndjson", "codex", "claude-code"]),
    /** argv of the agent; the first element is looked up on PATH. */
    command: z.array(z.string().min(1)).min(1),
    /** Names of the host's environment variables passed through to the agent. */
    env: z.array(EnvName).default([]),
    /** The ndjson agent's own state path, relative to the run's workspace. */
    checkpoint: z.string().min(1).optional(),
    /** The OS sandbox of the agent (runner-bridge --sandbox); a pool defaults to `os`. */
    sandbox: z.enum(["none", "os"]).optional(),
    /** Its network (runner-bridge --network: `none`, `host` or `allow:<domain,…>`); the pool checks the value. */
    network: z.string().min(1).max(2000).optional(),
  })
  .strict();
export type AgentProfile = z.infer<typeof AgentProfile>;

/** A pool host's agents file: profile name → profile. */
export const AgentProfiles = z.record(ProfileName, AgentProfile);
export type AgentProfiles = z.infer<typeof AgentProfiles>;

const HostId = z.string().min(1).max(200);
const AssignmentId = z.string().min(1).max(200);

/** Frames a pool host sends. */
export const PoolHostFrame = z
  .discriminatedUnion("type", [
    z
      .object({
        type: z.literal("hello"),
        /** Stable for the life of the pool process, so a reconnect is recognised as the same host. */
        hostId: HostId,
        slots: z.number().int().min(1).max(256),
        profiles: z.array(ProfileName).min(1).max(64),
        labels: z.array(z.string().min(1).max(64)).max(16).default([]),
        /** Assignments whose bridge is still alive on this host (after a reconnect): not reassigned. */
        running: z
          .array(z.object({ assignmentId: AssignmentId, runId: RunId }).strict())
          .max(256)
          .default([]),
      })
      .strict(),
    /** A bridge was started for the assignment; its slot is taken. */
    z.object({ type: z.literal("accepted"), assignmentId: AssignmentId }).strict(),
    /** The host cannot run it (no free slot, profile gone); the dispatcher assigns it again. */
    z.object({ type: z.literal("declined"), assignmentId: AssignmentId, reason: z.string().max(1000) }).strict(),
    /** The assignment's bridge exited; its slot is free. */
    z
      .object({
        type: z.literal("released"),
        assignmentId: AssignmentId,
        runId: RunId,
        exitCode: z.union([z.number().int(), z.null()]),
      })
      .strict(),
    z.object({ type: z.literal("heartbeat") }).strict(),
  ])
  .meta({ id: "PoolHostFrame", description: "A frame a pool host sends" });
export type PoolHostFrame = z.infer<typeof PoolHostFrame>;

/** Frames the edge sends a pool host. */
export const PoolEdgeFrame = z
  .discriminatedUnion("type", [
    z
      .object({
        type: z.literal("welcome"),
        hostId: HostId,
        queue: QueueName,
        /** The host sends a heartbeat at least this often. */
        heartbeatMs: z.number().int().min(1),
      })
      .strict(),
    z
      .object({
        type: z.literal("assign"),
        assignmentId: AssignmentId,
        runId: RunId,
        profile: ProfileName,
        /** `run`: a first start, or a restart of a recovering run; `resume`: runner-bridge resume. */
        start: z.enum(["run", "resume"]),
        generation: Generation,
        /** A fresh runner token for this run only. */
        runnerToken: z.string().min(1),
        /** The first user message (`input.prompt` on create). */
        prompt: z.string().optional(),
        /** Unclaimed after this long, the assignment is taken back (a `revoke` follows). */
        leaseMs: z.number().int().min(1),
      })
      .strict(),
    /** Stop the assignment's bridge if it has not claimed: the lease lapsed or the run ended. */
    z
      .object({
        type: z.literal("revoke"),
        assignmentId: AssignmentId,
        runId: RunId,
        reason: z.string().max(1000),
      })
      .strict(),
    z.object({ type: z.literal("error"), code: z.string(), message: z.string() }).strict(),
  ])
  .meta({ id: "PoolEdgeFrame", description: "A frame the edge sends a pool host" });
export type PoolEdgeFrame = z.infer<typeof PoolEdgeFrame>;
