import type { z } from "zod";
import {
  ApprovalBody,
  CancelBody,
  CommandBody,
  CreateRunBody,
  DEFAULT_TIMEOUTS,
  RecoverBody,
  RerunBody,
  TokenBody,
  CreateWebhookBody,
} from "../protocol/index.ts";

/**
 * The request body each documented route shows, and the reference page's "Try it out" sends: a
 * request someone would make. Without one the page fills every number with its schema's minimum
 * (a run whose deadlines are all 1 ms is gone within a second). test/edge/openapi checks each is
 * accepted by its schema, and that the create example makes a run that lasts.
 */
export const REQUEST_EXAMPLES = new Map<z.ZodType, unknown>([
  [
    CreateRunBody,
    {
      agent: { name: "codex" },
      input: { prompt: "The payments tests fail since the last deploy; find out why and fix them." },
      metadata: { ticket: "PAY-142", requestedBy: "ops@example.com" },
      timeouts: { idleMs: DEFAULT_TIMEOUTS.idleMs, runMs: 24 * 60 * 60 * 1000 },
    },
  ],
  [CommandBody, { commandId: "steer-7f3a", type: "input", text: "Also update the changelog." }],
  [ApprovalBody, { decision: "approve", reason: "the migration only adds a column" }],
  [CancelBody, { commandId: "cancel-7f3a", reason: "superseded by a newer run" }],
  [RecoverBody, { action: "resume", commandId: "recover-7f3a" }],
  [RerunBody, { runId: "fix-payments-2" }],
  [CreateWebhookBody, { url: "https://hooks.example.com/agent-runs", events: ["run.waiting", "run.failed"] }],
  [TokenBody, { role: "viewer", interact: false, ttlMs: 60 * 60 * 1000 }],
]);
