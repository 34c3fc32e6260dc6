import type { AgentEvent } from "../types.ts";
import {
  agentSession,
  approvalRequested,
  contentText,
  type Native,
  obj,
  raw,
  reasoningChunk,
  reasoningContent,
  reasoningEnd,
  reasoningStart,
  runError,
  runFinished,
  str,
  textChunk,
  textContent,
  textEnd,
  textStart,
  toolArgs,
  toolChunk,
  toolEnd,
  toolResult,
  toolStart,
} from "./events.ts";

/**
 * Claude Code stream-json messages → AG-UI events, one event per message (the table is in
 * docs/ADAPTERS.md). The AG-UI thread is claude's session; a turn opens with `system/init`
 * (reported as `agent.session`, claude prints one per turn) and closes with `result`
 * (RUN_FINISHED, or RUN_ERROR when `is_error`). Claude prints each content block of an assistant
 * message as its own whole message, so a text block is a TEXT_MESSAGE_CHUNK and a tool_use a
 * TOOL_CALL_CHUNK; with `--include-partial-messages` the `stream_event`s map to
 * START/CONTENT/END and the whole messages they streamed become RAW.
 */

export const SOURCE = "claude-code";
const TOOL_BLOCKS: ReadonlySet<string> = new Set(["tool_use", "server_tool_use", "mcp_tool_use"]);

type Msg = Record<string, unknown>;
type Block = { kind: "text" | "reasoning" | "tool"; id: string };

/** The run's error when a `result` has `is_error`: claude's own words, and a code from its subtype. */
export function resultError(msg: Msg): { code: string; message: string } {
  const subtype = str(msg.subtype) ?? "error";
  const reason = subtype === "success" ? (str(msg.terminal_reason) ?? "error") : subtype;
  const errors = Array.isArray(msg.errors) ? msg.errors.filter((e) => typeof e === "string").join("; ") : "";
  const message = str(msg.result) || errors || reason;
  return { code: `claude_${reason}`, message };
}

/** Returns a mapper for one journal: it remembers the session, the turn and the blocks being streamed. */
export function claudeEvents(): (msg: Msg | null, line: string) => AgentEvent {
  let session = "";
  let turn = "";
  let userMessages = 0;
  let unnamedMessages = 0;
  let turns = 0;
  let streamingMessage = "";
  const streamedMessages = new Set<string>();
  const blocks = new Map<number, Block>();

  const assistant = (msg: Msg, native: Native): AgentEvent => {
    const message = obj(msg.message);
    const messageId = str(message.id) ?? str(msg.uuid) ?? `assistant:${++unnamedMessages}`;
    if (streamedMessages.has(messageId)) return raw(msg, SOURCE, native); // its stream_events rendered it
    const content = Array.isArray(message.content) ? message.content.map(obj) : [];
    if (content.length > 0 && content.every((b) => b.type === "text")) {
      return textChunk(messageId, "assistant", contentText(content), native);
    }
    const block = content[0] ?? {};
    if (block.type === "thinking" && typeof block.thinking === "string") {
      return reasoningChunk(`${messageId}:thinking`, block.thinking, native);
    }
    const toolCallId = str(block.id);
    if (TOOL_BLOCKS.has(String(block.type)) && toolCallId !== undefined) {
      const toolCallName = str(block.name) ?? "tool";
      return toolChunk({ toolCallId, toolCallName, parentMessageId: messageId, args: block.input }, native);
    }
    return raw(msg, SOURCE, native);
  };

  const user = (msg: Msg, native: Native): AgentEvent => {
    const content = obj(msg.message).content;
    const parts = Array.isArray(content) ? content.map(obj) : [];
    const result = parts[0];
    const toolUseId = str(result?.tool_use_id);
    if (result?.type === "tool_result" && toolUseId !== undefined) {
      return toolResult(toolUseId, contentText(result.content), native);
    }
    if (typeof content === "string" || (parts.length > 0 && parts.every((p) => p.type === "text"))) {
      return textChunk(str(msg.uuid) ?? `user:${++userMessages}`, "user", contentText(content), native);
    }
    return raw(msg, SOURCE, native);
  };

  const streamEvent = (msg: Msg, native: Native): AgentEvent => {
    const event = obj(msg.event);
    const index = typeof event.index === "number" ? event.index : -1;
    const block = blocks.get(index);
    const delta = obj(event.delta);
    switch (event.type) {
      case "message_start": {
        streamingMessage = str(obj(event.message).id) ?? `stream:${turn}`;
        streamedMessages.add(streamingMessage);
        break;
      }
      case "content_block_start": {
        const start = obj(event.content_block);
        const id = str(start.id);
        if (start.type === "text") {
          blocks.set(index, { kind: "text", id: streamingMessage });
          return textStart(streamingMessage, "assistant", native);
        }
        if (start.type === "thinking") {
          blocks.set(index, { kind: "reasoning", id: `${streamingMessage}:thinking` });
          return reasoningStart(`${streamingMessage}:thinking`, native);
        }
        if (TOOL_BLOCKS.has(String(start.type)) && id !== undefined) {
          blocks.set(index, { kind: "tool", id });
          return toolStart(id, str(start.name) ?? "tool", streamingMessage, native);
        }
        break;
      }
      case "content_block_delta": {
        if (block?.kind === "text" && typeof delta.text === "string") return textContent(block.id, delta.text, native);
        if (block?.kind === "reasoning" && typeof delta.thinking === "string") {
          return reasoningContent(block.id, delta.thinking, native);
        }
        if (block?.kind === "tool" && typeof delta.partial_json === "string") {
          return toolArgs(block.id, delta.partial_json, native);
        }
        break;
      }
      case "content_block_stop": {
        blocks.delete(index);
        if (block?.kind === "text") return textEnd(block.id, native);
        if (block?.kind === "reasoning") return reasoningEnd(block.id, native);
        if (block?.kind === "tool") return toolEnd(block.id, native);
        break;
      }
    }
    return raw(msg, SOURCE, native);
  };

  return (msg, line) => {
    if (!msg) return raw(line, SOURCE);
    const native: Native = {
      raw: msg,
      timestamp: typeof msg.timestamp === "string" ? Date.parse(msg.timestamp) : undefined,
    };
    switch (msg.type) {
      case "system": {
        const id = str(msg.session_id);
        if (msg.subtype !== "init" || id === undefined) break;
        session = id;
        turns++;
        turn = str(msg.uuid) ?? `${id}:turn-${turns}`;
        return agentSession(SOURCE, id, native);
      }
      case "assistant":
        return assistant(msg, native);
      case "user":
        return user(msg, native);
      case "stream_event":
        return streamEvent(msg, native);
      case "result": {
        if (msg.is_error === true) {
          const error = resultError(msg);
          return runError(error.message, error.code, native);
        }
        const threadId = str(msg.session_id) ?? session;
        return runFinished(
          { threadId, runId: turn || (str(msg.uuid) ?? threadId), outcome: "success", result: msg.result },
          native,
        );
      }
      case "control_request": {
        const request = obj(msg.request);
        const requestId = str(msg.request_id);
        if (request.subtype !== "can_use_tool" || requestId === undefined) break;
        const { subtype: _subtype, tool_name, input, ...rest } = request;
        return approvalRequested(
          requestId,
          { toolName: tool_name, input, ...rest, toolCallId: str(rest.tool_use_id) },
          native,
        );
      }
    }
    return raw(msg, SOURCE, native);
  };
}
