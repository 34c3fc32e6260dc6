import {
  type CommandFrame,
  fail,
  invalid,
  ok,
  type Result,
  type RunnerFrame,
  RunnerFrame as RunnerFrameSchema,
  ServerToRunner,
} from "../../src/protocol/index.ts";

/** A frame from the edge, or a Failure saying what was wrong with it. */
export function parseServerFrame(text: string): Result<ServerToRunner> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail("invalid_json", `not JSON: ${text.slice(0, 120)}`);
  }
  const parsed = ServerToRunner.safeParse(value);
  return parsed.success ? ok(parsed.data) : invalid("invalid_frame", parsed.error);
}

/** Serialises a frame we send; validating it against the shared schema catches bridge bugs early. */
export function encodeRunnerFrame(frame: RunnerFrame): string {
  const checked = RunnerFrameSchema.safeParse(frame);
  if (!checked.success) throw new Error(`bridge built an invalid ${frame.type} frame: ${checked.error.message}`);
  return JSON.stringify(frame);
}

export type { CommandFrame };
