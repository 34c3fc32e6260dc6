import { AguiEventType, type RunEvent } from "../../../src/protocol/index.ts";
import { clip, fields } from "@agent-run/client/transcript";

export { clip, inline, toolHeadline } from "@agent-run/client/transcript";

/**
 * What the agent itself printed, and short names for it. Adapters keep the native message on
 * every event they build (`rawEvent`; RAW carries it as `event`, docs/ADAPTERS.md), so a row can
 * say what a RAW event was (a codex method, a claude message type) without a table per agent.
 */

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** The native message an event was built from, if the adapter kept it. */
export function nativeOf(event: RunEvent): unknown {
  const data = fields(event.data);
  return event.type === AguiEventType.RAW ? data.event : data.rawEvent;
}

/**
 * A few words naming a native message: a JSON-RPC method (with the error or message it carries),
 * a message type and subtype, a response's id; "text" for a line that was not JSON.
 */
export function nativeLabel(native: unknown): string {
  if (typeof native === "string") return "text";
  const msg = fields(native);
  const method = text(msg.method);
  if (method) {
    const params = fields(msg.params);
    const said = text(fields(params.error).message) ?? text(params.message) ?? text(params.summary);
    return said ? `${method} · ${clip(said, 120)}` : method;
  }
  const type = text(msg.type);
  if (type) {
    const sub =
      text(msg.subtype) ??
      text(fields(msg.event).type) ??
      text(fields(msg.request).subtype) ??
      text(fields(msg.response).subtype);
    return sub ? `${type} · ${sub}` : type;
  }
  if (typeof msg.id === "string" || typeof msg.id === "number") {
    return `response ${msg.id}${msg.error === undefined ? "" : " · error"}`;
  }
  return "";
}

/** The first non-empty line of a tool's result, and how many lines follow it. */
export function resultPreview(result: string): string {
  const lines = result.split("\n").filter((line) => line.trim() !== "");
  const first = clip((lines[0] ?? "").trim(), 140);
  return lines.length > 1 ? `${first} (+${lines.length - 1} lines)` : first;
}
