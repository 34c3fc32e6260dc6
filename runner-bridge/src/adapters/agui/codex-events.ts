import type { AgentEvent } from "../types.ts";
import {
  agentSession,
  approvalRequested,
  contentText,
  type Native,
  obj,
  raw,
  reasoningContent,
  reasoningEnd,
  reasoningStart,
  runError,
  runFinished,
  runStarted,
  str,
  textChunk,
  textContent,
  textEnd,
  textStart,
  toolChunk,
  toolResult,
} from "./events.ts";

/**
 * `codex app-server` messages → AG-UI events, one event per message (the table is in
 * docs/ADAPTERS.md). An AG-UI thread is the codex thread and an AG-UI run is one codex turn.
 * Streamed items map to START/CONTENT/END; items that arrive whole (the user's message, a tool
 * call's arguments) map to AG-UI's one-event shorthands (`*_CHUNK`).
 */

export const SOURCE = "codex";
/** JSON-RPC ids of the requests the adapter sends at startup. */
export const INIT_ID = "rb-initialize";
export const THREAD_ID = "rb-thread-start";
/** The request that resumes the run's thread in a new generation (instead of thread/start). */
export const RESUME_ID = "rb-thread-resume";
const THREAD_REQUESTS: Record<string, string> = { [THREAD_ID]: "thread/start", [RESUME_ID]: "thread/resume" };

/** Server requests that ask the operator to approve a command or a file change. */
export const APPROVAL_METHODS: ReadonlySet<string> = new Set([
  "item/commandExecution/requestApproval",
  "item/fileChange/requestApproval",
  "execCommandApproval",
  "applyPatchApproval",
]);

type Msg = Record<string, unknown>;

/** Item types that are tool calls: AG-UI tool name and arguments of each. */
const TOOL_ITEMS: Record<string, (item: Msg) => { name: string; args: unknown }> = {
  commandExecution: (item) => ({ name: "commandExecution", args: { command: item.command, cwd: item.cwd } }),
  fileChange: (item) => ({ name: "fileChange", args: { changes: item.changes } }),
  mcpToolCall: (item) => ({ name: `${str(item.server) ?? "mcp"}.${str(item.tool) ?? "tool"}`, args: item.arguments }),
  dynamicToolCall: (item) => ({ name: str(item.tool) ?? "dynamicTool", args: item.arguments }),
  webSearch: (item) => ({ name: "webSearch", args: { query: item.query } }),
};

/** What a finished tool item returned, as the TOOL_CALL_RESULT content string. */
function toolOutput(item: Msg): string {
  if (item.type === "commandExecution" && typeof item.aggregatedOutput === "string") return item.aggregatedOutput;
  if (item.type === "commandExecution") return JSON.stringify({ status: item.status, exitCode: item.exitCode ?? null });
  return JSON.stringify(item.result ?? item.error ?? item.contentItems ?? { status: item.status ?? null });
}

/** Returns a mapper for one journal; it keeps no state, every event follows from its own message. */
export function codexEvents(): (msg: Msg | null, line: string) => AgentEvent {
  return (msg, line) => {
    if (!msg) return raw(line, SOURCE);
    const native: Native = { raw: msg, timestamp: typeof msg.emittedAtMs === "number" ? msg.emittedAtMs : undefined };
    const method = str(msg.method);
    const id = typeof msg.id === "string" || typeof msg.id === "number" ? msg.id : undefined;
    if (method !== undefined && id !== undefined) return serverRequest(method, id, obj(msg.params), native);
    if (method !== undefined) return notification(method, obj(msg.params), native);
    if (id !== undefined) return response(id, msg, native);
    return raw(msg, SOURCE);
  };
}

function serverRequest(method: string, id: string | number, params: Msg, native: Native): AgentEvent {
  if (!APPROVAL_METHODS.has(method)) return raw(native.raw, SOURCE, native);
  const toolCallId = str(params.itemId) ?? str(params.callId);
  return approvalRequested(`codex-${id}`, { method, ...params, toolCallId }, native);
}

function response(id: string | number, msg: Msg, native: Native): AgentEvent {
  if (msg.error !== undefined && (id === INIT_ID || THREAD_REQUESTS[id] !== undefined)) {
    const what = id === INIT_ID ? "initialize" : THREAD_REQUESTS[id];
    const message = str(obj(msg.error).message) ?? JSON.stringify(msg.error);
    return runError(`${what} failed: ${message}`, "codex_startup", native);
  }
  const threadId = str(obj(obj(msg.result).thread).id);
  if (THREAD_REQUESTS[id] !== undefined && threadId !== undefined) return agentSession(SOURCE, threadId, native);
  return raw(msg, SOURCE, native);
}

function notification(method: string, params: Msg, native: Native): AgentEvent {
  const threadId = str(params.threadId) ?? "";
  const turn = obj(params.turn);
  const item = obj(params.item);
  const itemId = str(item.id) ?? str(params.itemId);
  const delta = str(params.delta);
  switch (method) {
    case "turn/started":
      if (str(turn.id) !== undefined) return runStarted(threadId, turn.id as string, native);
      break;
    case "turn/completed":
      return turnCompleted(threadId, turn, native);
    case "item/started":
      if (itemId !== undefined) return itemStarted(itemId, item, native);
      break;
    case "item/completed":
      if (itemId !== undefined) return itemCompleted(itemId, item, native);
      break;
    case "item/agentMessage/delta":
      if (itemId !== undefined && delta !== undefined) return textContent(itemId, delta, native);
      break;
    case "item/reasoning/summaryTextDelta":
    case "item/reasoning/textDelta":
      if (itemId !== undefined && delta !== undefined) return reasoningContent(itemId, delta, native);
      break;
    case "item/reasoning/summaryPartAdded":
      // a new summary paragraph: render the break between parts
      if (itemId !== undefined) return reasoningContent(itemId, "\n\n", native);
      break;
  }
  return raw(native.raw, SOURCE, native);
}

function turnCompleted(threadId: string, turn: Msg, native: Native): AgentEvent {
  const runId = str(turn.id);
  if (runId === undefined) return raw(native.raw, SOURCE, native);
  switch (turn.status) {
    case "completed":
      return runFinished({ threadId, runId, outcome: "success" }, native);
    case "interrupted":
      return runFinished({ threadId, runId, outcome: "cancelled" }, native);
    case "failed":
      return runError(str(obj(turn.error).message) ?? "the turn failed", "turn_failed", native);
    default:
      return raw(native.raw, SOURCE, native);
  }
}

function itemStarted(itemId: string, item: Msg, native: Native): AgentEvent {
  const type = str(item.type) ?? "";
  if (type === "agentMessage") return textStart(itemId, "assistant", native);
  if (type === "reasoning") return reasoningStart(itemId, native);
  // the user's message is whole when it starts
  if (type === "userMessage") return textChunk(itemId, "user", contentText(item.content), native);
  const tool = TOOL_ITEMS[type]?.(item);
  if (tool) return toolChunk({ toolCallId: itemId, toolCallName: tool.name, args: tool.args }, native);
  return raw(native.raw, SOURCE, native);
}

function itemCompleted(itemId: string, item: Msg, native: Native): AgentEvent {
  const type = str(item.type) ?? "";
  if (type === "agentMessage") return textEnd(itemId, native);
  if (type === "reasoning") return reasoningEnd(itemId, native);
  if (TOOL_ITEMS[type]) return toolResult(itemId, toolOutput(item), native);
  return raw(native.raw, SOURCE, native);
}
