import type { RunEvent } from "../../../src/protocol/index.ts";
import { fields } from "../fields.ts";

/**
 * What the agent itself printed, and short names for it. Adapters keep the native message on
 * every event they build (`rawEvent`; RAW carries it as `event`, docs/ADAPTERS.md), so a row can
 * say what a RAW event was (a codex method, a claude message type) without a table per agent.
 */

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

export function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

/** One-line JSON (or the string itself). */
export function inline(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return String(value);
  }
}

/** The native message an event was built from, if the adapter kept it. */
export function nativeOf(event: RunEvent): unknown {
  const data = fields(event.data);
  return event.type === "RAW" ? data.event : data.rawEvent;
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

const HEADLINE_FIELDS = ["command", "cmd", "query", "q", "pattern", "file_path", "filePath", "path", "url", "prompt"];

/**
 * The part of a tool call's arguments a reader looks for first: the command it runs, the file it
 * touches, what it searches; else the arguments as one line.
 */
export function toolHeadline(args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    // JSON still streaming says nothing yet; other text is the arguments as they are
    return /^\s*[[{]/.test(args) ? "" : clip(args.replaceAll(/\s+/g, " ").trim(), 120);
  }
  const named = fields(parsed);
  for (const key of HEADLINE_FIELDS) {
    const value = named[key];
    if (typeof value === "string" && value !== "") return clip(value, 120);
    if (Array.isArray(value) && value.every((part) => typeof part === "string")) return clip(value.join(" "), 120);
  }
  if (Array.isArray(named.changes)) {
    const paths = named.changes.map((change) => text(fields(change).path)).filter((path) => path !== undefined);
    if (paths.length > 0) return clip(paths.join(", "), 120);
  }
  return Object.keys(named).length === 0 && !Array.isArray(parsed) && typeof parsed === "object"
    ? ""
    : clip(inline(parsed), 120);
}

/** The first non-empty line of a tool's result, and how many lines follow it. */
export function resultPreview(result: string): string {
  const lines = result.split("\n").filter((line) => line.trim() !== "");
  const first = clip((lines[0] ?? "").trim(), 140);
  return lines.length > 1 ? `${first} (+${lines.length - 1} lines)` : first;
}
