import {
  type CommandFrame,
  type RunnerFrame,
  RunnerFrame as RunnerFrameSchema,
  ServerToRunner,
} from "../../src/protocol/index.ts";

/** The frame, or an error string naming what was wrong with it. */
export function parseServerFrame(text: string): { frame: ServerToRunner } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: `not JSON: ${text.slice(0, 120)}` };
  }
  const parsed = ServerToRunner.safeParse(value);
  if (!parsed.success) {
    const type = (value as { type?: unknown } | null)?.type;
    return { error: `unexpected ${String(type)} frame: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  }
  return { frame: parsed.data };
}

/** Serialises a frame we send; validating it against the shared schema catches bridge bugs early. */
export function encodeRunnerFrame(frame: RunnerFrame): string {
  const checked = RunnerFrameSchema.safeParse(frame);
  if (!checked.success)
    throw new Error(`bridge built an invalid ${frame.type} frame: ${checked.error.issues[0]?.message}`);
  return JSON.stringify(frame);
}

export type { CommandFrame };
