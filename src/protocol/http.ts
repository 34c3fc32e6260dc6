import { z } from "zod";
import { EVENTS_PAGE_DEFAULT, EVENTS_PAGE_MAX, RUNS_PAGE_DEFAULT, RUNS_PAGE_MAX } from "./limits.ts";
import { MAX_DEADLINE_MS, RunId, RunStatus, Timeouts } from "./run.ts";

const Metadata = z.record(z.string().max(256), z.unknown());

export const CreateRunBody = z
  .object({
    runId: RunId.optional(),
    agent: z.unknown().optional(),
    input: z.unknown().optional(),
    metadata: Metadata.optional(),
    timeouts: Timeouts.partial().optional(),
    retentionMs: z.number().int().min(1).max(MAX_DEADLINE_MS).optional(),
  })
  .strict()
  .meta({ id: "CreateRunBody", description: "Every field is optional; without `runId` one is generated" });
export type CreateRunBody = z.infer<typeof CreateRunBody>;

export const CommandId = z.string().min(1).max(200);

export const CommandBody = z
  .object({
    commandId: CommandId,
    type: z.enum(["input", "interrupt", "cancel"]),
    text: z
      .string()
      .max(256 * 1024)
      .optional(),
  })
  .strict()
  .refine((body) => body.type !== "input" || body.text !== undefined, {
    message: "an input command needs text",
    path: ["text"],
  })
  .meta({ id: "CommandBody", description: "`text` is required for `input`" });
export type CommandBody = z.infer<typeof CommandBody>;

export const ApprovalBody = z
  .object({ decision: z.enum(["approve", "deny"]), reason: z.string().max(8192).optional() })
  .strict()
  .meta({ id: "ApprovalBody" });
export type ApprovalBody = z.infer<typeof ApprovalBody>;

export const CancelBody = z
  .object({ commandId: CommandId.optional(), reason: z.string().max(8192).optional() })
  .strict()
  .meta({ id: "CancelBody" });
export type CancelBody = z.infer<typeof CancelBody>;

export const TokenBody = z
  .object({
    role: z.enum(["runner", "viewer"]),
    interact: z.boolean().optional(),
    ttlMs: z.number().int().min(1000).max(MAX_DEADLINE_MS).optional(),
  })
  .strict()
  .refine((body) => body.role === "viewer" || body.interact === undefined, {
    message: "only viewer tokens take interact",
    path: ["interact"],
  })
  .meta({ id: "TokenBody", description: "`interact` only for viewer tokens; `ttlMs` at least 1000" });
export type TokenBody = z.infer<typeof TokenBody>;

const IntString = (min: number, max: number) =>
  z.string().regex(/^\d+$/, "must be a whole number").transform(Number).pipe(z.number().int().min(min).max(max));

export const EventsQuery = z.object({
  after: IntString(0, Number.MAX_SAFE_INTEGER).default(0),
  limit: IntString(1, EVENTS_PAGE_MAX).default(EVENTS_PAGE_DEFAULT),
});

/** The credential may come as `?token=` too; authentication reads it, not this schema. */
export const WatchQuery = z.object({
  after: IntString(0, Number.MAX_SAFE_INTEGER).default(0),
});

export const ListRunsQuery = z.object({
  status: RunStatus.optional(),
  limit: IntString(1, RUNS_PAGE_MAX).default(RUNS_PAGE_DEFAULT),
  cursor: z.string().max(512).optional(),
});

/** Path parameters of the run routes. */
export const RunParams = z.object({ runId: RunId });
export const ApprovalParams = z.object({ runId: RunId, requestId: z.string().min(1).max(200) });
