import { z } from "zod";
import { MAX_BATCH_EVENTS } from "./limits.ts";
import { RunnerOutcome } from "./run.ts";

const Epoch = z.number().int().min(1);
const SourceSeq = z.number().int().min(1);

/** One agent event as the runner sends it; the object assigns seq and epoch. */
export const RunnerEvent = z
  .object({
    sourceSeq: SourceSeq,
    type: z.string().min(1).max(200),
    data: z.unknown().optional(),
    time: z.string().max(64).optional(),
  })
  .strict();
export type RunnerEvent = z.infer<typeof RunnerEvent>;

/** Frames a runner sends. */
export const RunnerFrame = z.discriminatedUnion("type", [
  z
    .object({
      type: z.literal("hello"),
      runnerId: z.string().min(1).max(200),
      lastSourceSeq: z.number().int().min(0),
    })
    .strict(),
  z
    .object({ type: z.literal("events"), epoch: Epoch, events: z.array(RunnerEvent).min(1).max(MAX_BATCH_EVENTS) })
    .strict(),
  z.object({ type: z.literal("heartbeat"), epoch: Epoch }).strict(),
  z.object({ type: z.literal("complete"), epoch: Epoch, outcome: RunnerOutcome }).strict(),
  z
    .object({
      type: z.literal("commandAck"),
      epoch: Epoch,
      controllerSeq: z.number().int().min(1),
      commandId: z.string().min(1).max(200),
      state: z.enum(["delivered", "applied", "rejected"]),
    })
    .strict(),
]);
export type RunnerFrame = z.infer<typeof RunnerFrame>;

/** A command as it reaches the runner. */
export interface CommandFrame {
  type: "command";
  controllerSeq: number;
  commandId: string;
  kind: "input" | "interrupt" | "cancel" | "approval";
  /** queued/delivered: new to this runner; unknown: a predecessor may have applied it. */
  state: "queued" | "delivered" | "unknown";
  text?: string;
  requestId?: string;
  decision?: "approve" | "deny";
  reason?: string;
}

/** Frames the object sends to a runner. */
export type ServerToRunner =
  | { type: "claimed"; epoch: number; ackedSourceSeq: number; heartbeatMs: number; commands: CommandFrame[] }
  | { type: "fenced"; epoch: number }
  | { type: "rejected"; reason: "terminal-run"; status: string }
  | { type: "ack"; highestSourceSeq: number }
  | { type: "gap"; expected: number }
  | { type: "conflict"; sourceSeq: number }
  | { type: "completed"; status: string }
  | CommandFrame
  | { type: "error"; code: string; message: string };
