import type { CommandFrame, RunnerOutcome } from "../../../src/protocol/index.ts";
import type { Envelope } from "../command-file.ts";
import { claudeEvents, resultError } from "./agui/claude-events.ts";
import { clip, exitOutcome, parseObject } from "./common.ts";
import type { Adapter, CommandPlan, LineResult } from "./types.ts";
import { claudeUsage, withUsage } from "./usage.ts";

/**
 * Claude Code in `-p --input-format stream-json --output-format stream-json --verbose` mode
 * (add `--permission-prompt-tool stdio` for approvals to reach the edge, and
 * `--include-partial-messages` to stream text as it is written).
 *
 * Each output line becomes one AG-UI event (agui/claude-events.ts, docs/ADAPTERS.md): `system/init`
 * reports the session as `agent.session`, a `result` ends the turn's AG-UI run, and a
 * `control_request` with `request.subtype == "can_use_tool"` becomes `approval.requested` with
 * data `{requestId: request_id, toolName, input, toolCallId, ...}`; the decision is answered with
 * a `control_response` (`behavior: "allow"` with the original input as `updatedInput`, or
 * `behavior: "deny"` with a message). Other control requests (hook callbacks, SDK MCP messages)
 * are answered with an error response.
 * Input: `{"type":"user","message":{"role":"user","content":TEXT},...}` lines; `--prompt` is
 * the first one. Interrupt: a `control_request` with subtype `interrupt`. A `result` message ends
 * the turn and closes stdin, so the CLI exits; `is_error` makes the run fail with its text.
 */
export function claudeCodeAdapter(): Adapter {
  const permissionRequests = new Map<string, { input: unknown }>();
  let results = 0;
  let closed = false;
  let failure: { code: string; message: string } | null = null;
  const toEvent = claudeEvents();
  const usage = claudeUsage();

  const env = (commandId: string, message: unknown): Envelope => ({ commandId, line: JSON.stringify(message) });
  const userMessage = (text: string) => ({
    type: "user",
    message: { role: "user", content: text },
    parent_tool_use_id: null,
    session_id: "default",
  });

  return {
    name: "claude-code",
    startup(spec) {
      const out: Envelope[] = [
        env("claude:initialize", {
          type: "control_request",
          request_id: "rb-initialize",
          request: { subtype: "initialize", hooks: null },
        }),
      ];
      if (spec.prompt !== undefined) out.push(env("claude:prompt", userMessage(spec.prompt)));
      return out;
    },
    onLine(text): LineResult {
      const msg = parseObject(text);
      let event = toEvent(msg, text);
      if (msg?.type === "assistant")
        event = withUsage(event, usage.assistant((msg.message ?? {}) as Record<string, unknown>));
      if (msg?.type === "result") event = withUsage(event, usage.result(msg));
      if (msg?.type === "control_request" && typeof msg.request_id === "string") {
        const request = (msg.request ?? {}) as Record<string, unknown>;
        if (request.subtype === "can_use_tool") {
          permissionRequests.set(msg.request_id, { input: request.input });
          return { event };
        }
        return {
          event,
          reactions: [
            [
              env(`claude:unsupported:${msg.request_id}`, {
                type: "control_response",
                response: {
                  subtype: "error",
                  request_id: msg.request_id,
                  error: `runner-bridge does not handle ${String(request.subtype)}`,
                },
              }),
            ],
          ],
        };
      }
      const reactions: Envelope[][] = [];
      if (msg?.type === "result") {
        results++;
        failure = msg.is_error === true ? resultError(msg) : null;
        closed = true;
        reactions.push([{ commandId: `claude:close:${results}`, close: true }]);
      }
      return { event, reactions };
    },
    command(cmd: CommandFrame): CommandPlan {
      switch (cmd.kind) {
        case "input":
          if (closed) return { kind: "reject", reason: "the agent's stdin is closed (its turn finished)" };
          return { kind: "inbox", envelopes: [env(cmd.commandId, userMessage(cmd.text ?? ""))] };
        case "approval": {
          if (!cmd.requestId || !cmd.decision) return { kind: "reject", reason: "approval without requestId/decision" };
          const request = permissionRequests.get(cmd.requestId);
          if (!request) return { kind: "defer" };
          const response =
            cmd.decision === "approve"
              ? { behavior: "allow", updatedInput: request.input ?? {} }
              : { behavior: "deny", message: cmd.reason ?? "denied by the run's controller" };
          return {
            kind: "inbox",
            envelopes: [
              env(cmd.commandId, {
                type: "control_response",
                response: { subtype: "success", request_id: cmd.requestId, response },
              }),
            ],
          };
        }
        case "interrupt":
          if (closed) return { kind: "reject", reason: "no turn is running" };
          return {
            kind: "inbox",
            envelopes: [
              env(cmd.commandId, {
                type: "control_request",
                request_id: `rb-${cmd.commandId}`,
                request: { subtype: "interrupt" },
              }),
            ],
          };
        default:
          return { kind: "reject", reason: `claude-code adapter cannot apply ${cmd.kind}` };
      }
    },
    outcome(exit, ctx): RunnerOutcome {
      if (ctx.cancelled) return exitOutcome(exit, ctx);
      if (failure) return { status: "failed", error: { code: failure.code, message: clip(failure.message) } };
      return exitOutcome(exit, ctx);
    },
  };
}
