import { parseObject } from "../../../runner-bridge/src/adapters/common.ts";
import type { AgentEvent } from "../../../runner-bridge/src/adapters/types.ts";

/**
 * Lines through a fresh mapper of an adapter (codexEvents, claudeEvents), in order, as the
 * adapter feeds them: the mapper keeps state from line to line.
 */
export function mapLines(
  mapper: () => (msg: Record<string, unknown> | null, line: string) => AgentEvent,
  lines: string[],
): AgentEvent[] {
  const map = mapper();
  return lines.map((line) => map(parseObject(line), line));
}
