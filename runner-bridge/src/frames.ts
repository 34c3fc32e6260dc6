import { z } from "zod";
import type { CommandFrame, RunnerFrame, ServerToRunner } from "../../src/protocol/index.ts";
import { RunnerFrame as RunnerFrameSchema } from "../../src/protocol/index.ts";

/**
 * Defensive parsing of what the edge sends. The shared protocol only has TS types for
 * server-to-runner frames, so the bridge keeps its own (lenient on extra fields) schemas.
 */
const Command = z.object({
  type: z.literal("command"),
  controllerSeq: z.number().int().min(1),
  commandId: z.string().min(1).max(200),
  kind: z.enum(["input", "interrupt", "cancel", "approval"]),
  state: z.enum(["queued", "delivered", "unknown"]),
  text: z.string().optional(),
  requestId: z.string().optional(),
  decision: z.enum(["approve", "deny"]).optional(),
  reason: z.string().optional(),
});

const ServerFrame = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("claimed"),
    epoch: z.number().int().min(1),
    ackedSourceSeq: z.number().int().min(0),
    heartbeatMs: z.number().int().min(1),
    commands: z.array(Command),
  }),
  z.object({ type: z.literal("fenced"), epoch: z.number().int() }),
  z.object({ type: z.literal("rejected"), reason: z.string(), status: z.string() }),
  z.object({ type: z.literal("ack"), highestSourceSeq: z.number().int().min(0) }),
  z.object({ type: z.literal("gap"), expected: z.number().int().min(1) }),
  z.object({ type: z.literal("conflict"), sourceSeq: z.number().int().min(1) }),
  z.object({ type: z.literal("completed"), status: z.string() }),
  Command,
  z.object({ type: z.literal("error"), code: z.string(), message: z.string().default("") }),
]);

export type ParsedServerFrame = ServerToRunner;

/** The frame, or an error string naming what was wrong with it. */
export function parseServerFrame(text: string): { frame: ServerToRunner } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: `not JSON: ${text.slice(0, 120)}` };
  }
  const parsed = ServerFrame.safeParse(value);
  if (!parsed.success) {
    const type = (value as { type?: unknown } | null)?.type;
    return { error: `unexpected ${String(type)} frame: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  }
  return { frame: parsed.data as ServerToRunner };
}

/** Serialises a frame we send; validating it against the shared schema catches bridge bugs early. */
export function encodeRunnerFrame(frame: RunnerFrame): string {
  const checked = RunnerFrameSchema.safeParse(frame);
  if (!checked.success) throw new Error(`bridge built an invalid ${frame.type} frame: ${checked.error.issues[0]?.message}`);
  return JSON.stringify(frame);
}

export type { CommandFrame };
