import { z } from "zod";
import { EVENTS_PAGE_DEFAULT, EVENTS_PAGE_MAX, RUNS_PAGE_DEFAULT, RUNS_PAGE_MAX } from "./limits.ts";
import { ProfileName, QueueName } from "./pool.ts";
import { MAX_PROMPT_CHARS, MAX_RECOVERIES_LIMIT } from "./pool-api.ts";
import { Generation, MAX_DEADLINE_MS, RunId, RunStatus, Timeouts } from "./run.ts";
import { fail, ok, type Result } from "./result.ts";
import { Budget, Tag, Tags, TAGS_MAX } from "./usage.ts";

const Metadata = z.record(z.string().max(256), z.unknown());

export const CreateRunBody = z
  .object({
    runId: RunId.optional(),
    agent: z
      .unknown()
      .optional()
      .describe(
        "A string names an agent profile (ProfileName): the run is queued for a pool host serving it. Any other JSON value is an opaque description for a hand-started bridge",
      ),
    input: z.unknown().optional().describe("`input.prompt`, a string, is the agent's first user message"),
    metadata: Metadata.optional(),
    tags: Tags.optional(),
    budget: Budget.optional(),
    timeouts: Timeouts.partial().optional(),
    retentionMs: z.number().int().min(1).max(MAX_DEADLINE_MS).optional(),
    queue: QueueName.optional().describe("The tenant's queue a pool run waits in (default `default`)"),
    recovery: z
      .enum(["auto", "manual"])
      .optional()
      .describe("A pool run lost with its host: recovered by the pool (`auto`, the default) or left to an operator"),
    maxRecoveries: z
      .number()
      .int()
      .min(0)
      .max(MAX_RECOVERIES_LIMIT)
      .optional()
      .describe("Automatic recoveries before the run fails runner_lost (default 3)"),
  })
  .strict()
  .superRefine((body, context) => {
    const pooled = typeof body.agent === "string";
    if (pooled && !ProfileName.safeParse(body.agent).success) {
      context.addIssue({
        code: "custom",
        path: ["agent"],
        message: "agent, as a string, names a profile: [a-z0-9][a-z0-9._-]{0,63}",
      });
    }
    for (const field of ["queue", "recovery", "maxRecoveries"] as const) {
      if (!pooled && body[field] !== undefined) {
        context.addIssue({ code: "custom", path: [field], message: `${field} needs an agent profile name as agent` });
      }
    }
    const prompt = (body.input as { prompt?: unknown } | null | undefined)?.prompt;
    const hasPrompt = typeof body.input === "object" && body.input !== null && "prompt" in body.input;
    if (hasPrompt && (typeof prompt !== "string" || prompt.length > MAX_PROMPT_CHARS)) {
      const message = `input.prompt must be a string of at most ${MAX_PROMPT_CHARS} characters`;
      context.addIssue({ code: "custom", path: ["input", "prompt"], message });
    }
  })
  .meta({
    id: "CreateRunBody",
    description:
      "Every field is optional; without `runId` one is generated. `queue`, `recovery` and `maxRecoveries` need `agent` to name a profile",
  });
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
    generation: Generation.optional().describe("The generation it is meant for; another is refused (409 stale)"),
  })
  .strict()
  .refine((body) => body.type !== "input" || body.text !== undefined, {
    message: "an input command needs text",
    path: ["text"],
  })
  .meta({
    id: "CommandBody",
    description: "`text` is required for `input`; with `generation`, only that generation may receive it",
  });
export type CommandBody = z.infer<typeof CommandBody>;

export const ApprovalBody = z
  .object({ decision: z.enum(["approve", "deny"]), reason: z.string().max(8192).optional() })
  .strict()
  .meta({ id: "ApprovalBody" });
export type ApprovalBody = z.infer<typeof ApprovalBody>;

export const CancelBody = z
  .object({
    commandId: CommandId.optional(),
    reason: z.string().max(8192).optional(),
    generation: Generation.optional().describe("The generation it is meant for; another is refused (409 stale)"),
  })
  .strict()
  .meta({ id: "CancelBody" });
export type CancelBody = z.infer<typeof CancelBody>;

export const RecoverBody = z
  .object({ action: z.enum(["resume", "restart", "fail"]), commandId: CommandId })
  .strict()
  .meta({ id: "RecoverBody", description: "An operator's decision for a recovering run; idempotent by `commandId`" });
export type RecoverBody = z.infer<typeof RecoverBody>;

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
  .meta({
    id: "TokenBody",
    description:
      "`interact` only for viewer tokens; `ttlMs` at least 1000, and for an interacting token at most INTERACT_TOKEN_MAX_TTL_MS (default 7 days)",
  });
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

const Instant = z.iso
  .datetime({ offset: true })
  .transform((text) => Date.parse(text))
  .describe("ISO-8601 date-time");

export const ListRunsQuery = z.object({
  status: RunStatus.optional(),
  agent: z.string().min(1).max(256).optional().describe("The agent's name: a string agent, or its `name`"),
  tag: z
    .union([Tag, z.array(Tag).max(TAGS_MAX)])
    .optional()
    .transform((tag) => (tag === undefined ? [] : Array.isArray(tag) ? tag : [tag]))
    .describe("Repeatable: runs carrying every tag given"),
  createdAfter: Instant.optional().describe("Runs created strictly after this time"),
  createdBefore: Instant.optional().describe("Runs created strictly before this time"),
  limit: IntString(1, RUNS_PAGE_MAX).default(RUNS_PAGE_DEFAULT),
  cursor: z.string().max(512).optional(),
});
export type ListRunsQuery = z.infer<typeof ListRunsQuery>;

/** `meta.KEY=value` query parameters filter the list by a metadata entry (its text). */
export const META_FILTER_PREFIX = "meta.";
export const META_FILTERS_MAX = 10;

/** The `meta.KEY=value` filters of a query (every one must match), or why they are refused. */
export function metaFilters(queries: Record<string, string[]>): Result<[string, string][]> {
  const filters: [string, string][] = [];
  for (const [name, values] of Object.entries(queries)) {
    if (!name.startsWith(META_FILTER_PREFIX)) continue;
    const key = name.slice(META_FILTER_PREFIX.length);
    if (key.length === 0 || key.length > 256)
      return fail("invalid_query", `${name}: a metadata key is 1-256 characters`);
    for (const value of values) {
      if (value.length > 256)
        return fail("invalid_query", `${name}: a metadata value filter is at most 256 characters`);
      filters.push([key, value]);
    }
  }
  if (filters.length > META_FILTERS_MAX) {
    return fail("invalid_query", `at most ${META_FILTERS_MAX} meta.KEY filters`);
  }
  return ok(filters);
}

/** Everything GET /v1/runs filters by, every filter at once. */
export interface RunFilters {
  status?: RunStatus | undefined;
  agent?: string | undefined;
  tags?: string[] | undefined;
  meta?: [string, string][] | undefined;
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Where a checkpoint upload stands: the uploader's claim, and what the bytes cover. */
export const CheckpointQuery = z.object({
  epoch: IntString(1, Number.MAX_SAFE_INTEGER),
  generation: IntString(1, Number.MAX_SAFE_INTEGER),
  sourceSeq: IntString(0, Number.MAX_SAFE_INTEGER),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, "digest must be sha256:<64 lowercase hex digits>"),
});
export type CheckpointQuery = z.infer<typeof CheckpointQuery>;

/** Default bound of a checkpoint's size (the worker's CHECKPOINT_MAX_BYTES overrides it). */
export const CHECKPOINT_MAX_BYTES_DEFAULT = 50 * 1024 * 1024;

/** Path parameters of the run routes. */
export const RunParams = z.object({ runId: RunId });
export const ApprovalParams = z.object({ runId: RunId, requestId: z.string().min(1).max(200) });
export const TokenParams = z.object({ runId: RunId, tokenId: z.string().min(1).max(200) });
