import { AgentEventType, AguiEventType as T } from "../../../../src/protocol/index.ts";
import type { AgentEvent } from "../types.ts";

/**
 * Builders for the events adapters emit: AG-UI events (the types and fields of `@ag-ui/core`,
 * whose schemas the tests validate every produced event against) and the two event types of our
 * own protocol, `approval.requested` and `agent.session`.
 *
 * A stored event is `{type, data}`; the AG-UI event is `{type, ...data}`. Every event built from
 * a native message carries that message as `rawEvent` (RAW carries it as `event`), so nothing the
 * agent printed is dropped by the mapping.
 */

export { AGUI_EVENT_TYPES, OWN_EVENT_TYPES } from "../../../../src/protocol/index.ts";
/** Opens an approval on the edge (docs/PROTOCOL.md); data `{requestId, ...}`. */
export const APPROVAL_REQUESTED = AgentEventType.APPROVAL_REQUESTED;
/** The agent's own session identity (codex thread, claude session), for resuming it later. */
export const AGENT_SESSION = AgentEventType.AGENT_SESSION;
/** Provider usage since the previous report (src/protocol/usage.ts UsageDelta). */
export const AGENT_USAGE = AgentEventType.AGENT_USAGE;

/** Where an event came from: the native message, and when the agent says it printed it (ms). */
export interface Native {
  raw: unknown;
  timestamp?: number | undefined;
}

type Fields = Record<string, unknown>;
type Role = "developer" | "system" | "assistant" | "user";

function build(type: string, fields: Fields, native?: Native): AgentEvent {
  const data: Fields = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) data[key] = value;
  if (native?.timestamp !== undefined && Number.isSafeInteger(native.timestamp)) data.timestamp = native.timestamp;
  if (native && native.raw !== undefined && native.raw !== null) data.rawEvent = native.raw;
  return { type, data };
}

export const runStarted = (threadId: string, runId: string, n: Native) => build(T.RUN_STARTED, { threadId, runId }, n);
export const runFinished = (
  f: { threadId: string; runId: string; outcome: "success" | "cancelled"; result?: unknown },
  n: Native,
) =>
  build(
    T.RUN_FINISHED,
    { threadId: f.threadId, runId: f.runId, result: f.result ?? undefined, outcome: { type: f.outcome } },
    n,
  );
export const runError = (message: string, code: string | undefined, n: Native) =>
  build(T.RUN_ERROR, { message, code }, n);

export const textStart = (messageId: string, role: Role, n: Native) =>
  build(T.TEXT_MESSAGE_START, { messageId, role }, n);
export const textContent = (messageId: string, delta: string, n: Native) =>
  build(T.TEXT_MESSAGE_CONTENT, { messageId, delta }, n);
export const textEnd = (messageId: string, n: Native) => build(T.TEXT_MESSAGE_END, { messageId }, n);
/** A whole message in one event (AG-UI's shorthand for start + content + end). */
export const textChunk = (messageId: string, role: Role, delta: string, n?: Native) =>
  build(T.TEXT_MESSAGE_CHUNK, { messageId, role, delta }, n);

export const reasoningStart = (messageId: string, n: Native) =>
  build(T.REASONING_MESSAGE_START, { messageId, role: "reasoning" }, n);
export const reasoningContent = (messageId: string, delta: string, n: Native) =>
  build(T.REASONING_MESSAGE_CONTENT, { messageId, delta }, n);
export const reasoningEnd = (messageId: string, n: Native) => build(T.REASONING_MESSAGE_END, { messageId }, n);
export const reasoningChunk = (messageId: string, delta: string, n: Native) =>
  build(T.REASONING_MESSAGE_CHUNK, { messageId, delta }, n);

export const toolStart = (toolCallId: string, toolCallName: string, parentMessageId: string | undefined, n: Native) =>
  build(T.TOOL_CALL_START, { toolCallId, toolCallName, parentMessageId }, n);
export const toolArgs = (toolCallId: string, delta: string, n: Native) =>
  build(T.TOOL_CALL_ARGS, { toolCallId, delta }, n);
export const toolEnd = (toolCallId: string, n: Native) => build(T.TOOL_CALL_END, { toolCallId }, n);
/** A whole tool call (name and complete arguments) in one event. */
export const toolChunk = (
  f: { toolCallId: string; toolCallName: string; parentMessageId?: string | undefined; args: unknown },
  n: Native,
) =>
  build(
    T.TOOL_CALL_CHUNK,
    {
      toolCallId: f.toolCallId,
      toolCallName: f.toolCallName,
      parentMessageId: f.parentMessageId,
      delta: JSON.stringify(f.args ?? {}),
    },
    n,
  );
export const toolResult = (toolCallId: string, content: string, n: Native) =>
  build(T.TOOL_CALL_RESULT, { messageId: `${toolCallId}:result`, toolCallId, content, role: "tool" }, n);

/** A native message with no AG-UI counterpart, passed through whole. */
export const raw = (event: unknown, source: string, n?: Omit<Native, "raw">) =>
  build(T.RAW, { event, source }, n ? { raw: undefined, timestamp: n.timestamp } : undefined);

export const agentSession = (provider: string, id: string, n: Native) => build(AGENT_SESSION, { provider, id }, n);
export const approvalRequested = (requestId: string, fields: Fields, n: Native) =>
  build(APPROVAL_REQUESTED, { requestId, ...fields }, n);

/** The text of a content list (`[{type: "text", text}, …]`) or a plain string; other parts are skipped. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part && typeof part === "object" && typeof part.text === "string" ? (part.text as string) : ""))
    .join("");
}

export const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
export const obj = (value: unknown): Fields =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Fields) : {};
