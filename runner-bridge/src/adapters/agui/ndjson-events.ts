import { AguiEventType } from "../../../../src/protocol/index.ts";
import { MAX_LINE_CHARS, parseObject } from "../common.ts";
import type { AgentEvent } from "../types.ts";
import { AGUI_EVENT_TYPES, OWN_EVENT_TYPES, textChunk } from "./events.ts";

/**
 * Lines of an NDJSON agent → events (the rules are in docs/ADAPTERS.md):
 * - a JSON object whose `type` is an AG-UI event type, `approval.requested` or `agent.session`
 *   passes through: that type, the other fields as data (the agent speaks AG-UI itself);
 * - a JSON object with any other string `type` is the agent's own event: CUSTOM `{name: type,
 *   value: other fields}`;
 * - any other line is text the agent printed: TEXT_MESSAGE_CHUNK with the line (and its newline)
 *   as the delta; consecutive text lines are one assistant message, named after its first line.
 */

const MAX_TYPE_LENGTH = 200;

/** Returns a mapper for one journal: it counts lines, to name each run of text lines after its first. */
export function ndjsonEvents(): (line: string) => AgentEvent {
  let lineNo = 0;
  let textSince = 0;
  return (line) => {
    lineNo++;
    const msg = line.length > MAX_LINE_CHARS ? null : parseObject(line);
    const type = msg?.type;
    if (msg && typeof type === "string" && type.length > 0 && type.length <= MAX_TYPE_LENGTH) {
      textSince = 0;
      const { type: _type, ...data } = msg;
      if (AGUI_EVENT_TYPES.has(type) || OWN_EVENT_TYPES.has(type)) return { type, data };
      return { type: AguiEventType.CUSTOM, data: { name: type, value: data } };
    }
    if (textSince === 0) textSince = lineNo;
    return textLine(`line-${textSince}`, line);
  };
}

/** One printed line as (part of) an assistant text message. */
export function textLine(messageId: string, line: string): AgentEvent {
  if (line.length <= MAX_LINE_CHARS) return textChunk(messageId, "assistant", `${line}\n`);
  const event = textChunk(messageId, "assistant", `${line.slice(0, MAX_LINE_CHARS)}\n`);
  return { ...event, data: { ...(event.data as object), metadata: { truncated: true, length: line.length } } };
}
