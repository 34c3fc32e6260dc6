import type { CommandFrame } from "../../../src/protocol/index.ts";
import { exitOutcome, parseObject, typedEvent } from "./common.ts";
import type { Adapter, CommandPlan, LineResult } from "./types.ts";

/**
 * The default adapter. Output: a JSON object line with a string `type` is an event of that type
 * whose data is the other fields; any other line is a TEXT_MESSAGE_CONTENT event `{delta: line}`.
 * Input: `{"type":"input","text","commandId"}` and `{"type":"approval.resolved","requestId",
 * "decision","reason"?,"commandId"}` lines on stdin. Interrupt: SIGINT to the process group.
 */
export function ndjsonAdapter(): Adapter {
  return {
    name: "ndjson",
    startup: () => [],
    onLine(text): LineResult {
      return { event: typedEvent(text, parseObject(text)) };
    },
    command(cmd: CommandFrame): CommandPlan {
      switch (cmd.kind) {
        case "input":
          return {
            kind: "inbox",
            envelopes: [
              {
                commandId: cmd.commandId,
                line: JSON.stringify({ type: "input", text: cmd.text ?? "", commandId: cmd.commandId }),
              },
            ],
          };
        case "approval": {
          if (!cmd.requestId || !cmd.decision) return { kind: "reject", reason: "approval without requestId/decision" };
          const line: Record<string, unknown> = {
            type: "approval.resolved",
            requestId: cmd.requestId,
            decision: cmd.decision,
          };
          if (cmd.reason !== undefined) line.reason = cmd.reason;
          line.commandId = cmd.commandId;
          return { kind: "inbox", envelopes: [{ commandId: cmd.commandId, line: JSON.stringify(line) }] };
        }
        case "interrupt":
          return { kind: "signal", signal: "SIGINT" };
        default:
          return { kind: "reject", reason: `ndjson adapter cannot apply ${cmd.kind}` };
      }
    },
    outcome: exitOutcome,
  };
}
