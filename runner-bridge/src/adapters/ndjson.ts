import { type CommandFrame, ControlEventType } from "../../../src/protocol/index.ts";
import { ndjsonEvents } from "./agui/ndjson-events.ts";
import { exitOutcome } from "./common.ts";
import type { Adapter, CommandPlan, LineResult } from "./types.ts";

/**
 * The default adapter. Output (agui/ndjson-events.ts, docs/ADAPTERS.md): a JSON object line whose
 * `type` is an AG-UI event type, `approval.requested` or `agent.session` passes through as that
 * event; any other typed object is CUSTOM `{name: type, value}`; any other line is text, a
 * TEXT_MESSAGE_CHUNK of the assistant message its run of text lines forms.
 * Input: `--prompt` as a first `{"type":"prompt","text"}` line, then `{"type":"input","text","commandId"}` and `{"type":"approval.resolved","requestId",
 * "decision","reason"?,"commandId"}` lines on stdin. Interrupt: SIGINT to the process group.
 */
export function ndjsonAdapter(): Adapter {
  const toEvent = ndjsonEvents();
  return {
    name: "ndjson",
    startup: (spec) =>
      spec.prompt === undefined
        ? []
        : [{ commandId: "ndjson:prompt", line: JSON.stringify({ type: "prompt", text: spec.prompt }) }],
    onLine(text): LineResult {
      return { event: toEvent(text) };
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
            type: ControlEventType.APPROVAL_RESOLVED,
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
