import type { RunnerOutcome } from "../../../src/protocol/index.ts";
import type { ExitInfo } from "../sentinel.ts";
import type { OutcomeContext } from "./types.ts";

/** Lines longer than this become a truncated text event (an event must fit in a 1 MiB frame). */
export const MAX_LINE_CHARS = 256 * 1024;

/** Parses a line as a JSON object, or null. */
export function parseObject(line: string): Record<string, unknown> | null {
  const t = line.trimStart();
  if (!t.startsWith("{")) return null;
  try {
    const v = JSON.parse(line) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The outcome every adapter falls back to: exit 0 succeeded, otherwise failed with stderr's tail. */
export function exitOutcome(exit: ExitInfo, ctx: OutcomeContext): RunnerOutcome {
  if (ctx.cancelled) {
    return exit.code === null ? { status: "cancelled" } : { status: "cancelled", exitCode: exit.code };
  }
  if (exit.spawnError) {
    return { status: "failed", exitCode: 127, error: { code: "spawn_failed", message: clip(exit.spawnError) } };
  }
  if (exit.code === 0) return { status: "succeeded", exitCode: 0 };
  const how = exit.code !== null ? `exit code ${exit.code}` : `signal ${exit.signal ?? "unknown"}`;
  const tail = ctx.stderrTail.trim();
  const message = clip(tail ? `agent ended with ${how}; stderr: ${tail}` : `agent ended with ${how}`);
  const outcome: RunnerOutcome = {
    status: "failed",
    error: { code: exit.code !== null ? "agent_exit" : "agent_signal", message },
  };
  if (exit.code !== null) outcome.exitCode = exit.code;
  return outcome;
}

export function clip(text: string, max = 8000): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
