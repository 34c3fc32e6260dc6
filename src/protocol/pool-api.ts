import { z } from "zod";
import { ProfileName, QueueName } from "./pool.ts";
import { Generation, RunId } from "./run.ts";

// The HTTP side of runner pools: pool keys, queues and the connected hosts (docs/PROTOCOL.md,
// "Pools"). The pool socket's frames are in pool.ts.

const Timestamp = z.iso.datetime().describe("ISO-8601, UTC");

/** How long a host has to claim an assigned run before it is taken back, by default. */
export const DEFAULT_ASSIGN_MS = 30_000;
/** Automatic recoveries a pool run may use, by default. */
export const DEFAULT_MAX_RECOVERIES = 3;
export const MAX_RECOVERIES_LIMIT = 100;
/** Largest `input.prompt` a pool run takes: it travels in one `assign` frame. */
export const MAX_PROMPT_CHARS = 256 * 1024;

export const PoolKeyId = z.string().regex(/^[a-z0-9]{1,40}$/, "a pool key id is lowercase letters and digits");

export const PoolKeyBody = z
  .object({ label: z.string().min(1).max(200).optional() })
  .strict()
  .meta({ id: "PoolKeyBody", description: "An optional label to tell keys apart" });
export type PoolKeyBody = z.infer<typeof PoolKeyBody>;

export const PoolKeyRecord = z
  .object({ id: PoolKeyId, label: z.union([z.string(), z.null()]), createdAt: Timestamp })
  .meta({ id: "PoolKeyRecord", description: "A pool key as listed: never the key itself" });
export type PoolKeyRecord = z.infer<typeof PoolKeyRecord>;

export const MintedPoolKey = z
  .object({ ...PoolKeyRecord.shape, key: z.string().describe("Shown once: only the pool socket takes it") })
  .meta({ id: "MintedPoolKey" });
export type MintedPoolKey = z.infer<typeof MintedPoolKey>;

export const PoolKeyList = z.object({ keys: z.array(PoolKeyRecord) }).meta({ id: "PoolKeyList" });

export const RevokedPoolKey = z
  .object({
    id: PoolKeyId,
    revokedAt: Timestamp,
    closedSockets: z.number().int().min(0).describe("Open pool sockets of the key, now closed"),
  })
  .meta({ id: "RevokedPoolKey" });
export type RevokedPoolKey = z.infer<typeof RevokedPoolKey>;

export const PoolKeyParams = z.object({ keyId: PoolKeyId });
export const QueueParams = z.object({ queue: QueueName });
export const ConnectQuery = z.object({ queue: QueueName.optional() });

export const QueueSettingsBody = z
  .object({
    maxConcurrent: z
      .union([z.number().int().min(1).max(100_000), z.null()])
      .describe("Most runs of the queue held by hosts at once; null for no limit"),
    assignMs: z.number().int().min(1000).max(3_600_000).optional().describe("The assignment lease"),
  })
  .strict()
  .meta({ id: "QueueSettingsBody" });
export type QueueSettingsBody = z.infer<typeof QueueSettingsBody>;

export const QueueInfo = z
  .object({
    name: QueueName,
    maxConcurrent: z.union([z.number().int().min(1), z.null()]),
    assignMs: z.number().int().min(1),
    depth: z.number().int().min(0).describe("Runs waiting to be assigned"),
    running: z.number().int().min(0).describe("Runs assigned or held by a host: what maxConcurrent bounds"),
    hosts: z.number().int().min(0).describe("Connected pool hosts"),
    freeSlots: z.number().int().min(0),
  })
  .meta({ id: "QueueInfo", description: "A queue's settings and load" });
export type QueueInfo = z.infer<typeof QueueInfo>;

export const QueueList = z.object({ queues: z.array(QueueInfo) }).meta({ id: "QueueList" });

export const DispatchState = z.enum(["queued", "assigned", "running", "parked", "finished"]);
export type DispatchState = z.infer<typeof DispatchState>;

/** Most runs GET /v1/queues/{queue} lists. */
export const QUEUE_RUNS_LISTED = 500;

export const QueueRun = z
  .object({
    runId: RunId,
    profile: ProfileName,
    state: DispatchState,
    generation: Generation,
    queuePosition: z.union([z.number().int().min(1), z.null()]),
    poolHost: z.union([z.string(), z.null()]),
    createdAt: Timestamp,
  })
  .meta({ id: "QueueRun", description: "A run of the queue that has not finished" });
export type QueueRun = z.infer<typeof QueueRun>;

export const QueueDetail = z
  .object({
    ...QueueInfo.shape,
    runs: z.array(QueueRun).describe(`Its runs not finished, oldest first (at most ${QUEUE_RUNS_LISTED})`),
  })
  .meta({ id: "QueueDetail", description: "A queue, with the runs it holds and their places" });
export type QueueDetail = z.infer<typeof QueueDetail>;

export const HostRun = z
  .object({ runId: RunId, assignmentId: z.string(), generation: Generation, state: DispatchState })
  .meta({ id: "HostRun" });

export const PoolHostInfo = z
  .object({
    hostId: z.string(),
    queue: QueueName,
    keyId: PoolKeyId,
    profiles: z.array(ProfileName),
    labels: z.array(z.string()),
    slots: z.number().int().min(1),
    freeSlots: z.number().int().min(0),
    connectedAt: Timestamp,
    runs: z.array(HostRun),
  })
  .meta({ id: "PoolHostInfo", description: "A connected pool host" });
export type PoolHostInfo = z.infer<typeof PoolHostInfo>;

export const PoolList = z.object({ hosts: z.array(PoolHostInfo) }).meta({ id: "PoolList" });

/** Where a pool run stands in its queue: the run record's dispatch fields. */
export const Placement = z.object({
  poolHost: z.union([z.string(), z.null()]),
  queuePosition: z.union([z.number().int().min(1), z.null()]),
  dispatch: z.union([
    z
      .object({ state: DispatchState, reason: z.union([z.string(), z.null()]) })
      .meta({ id: "DispatchInfo", description: "The dispatcher's view of the run, and why it waits, if it does" }),
    z.null(),
  ]),
});
export type Placement = z.infer<typeof Placement>;
