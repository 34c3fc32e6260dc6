/**
 * Turns a run's events into a readable transcript: AG-UI message deltas joined into one line per
 * message, tool calls summarised (name, arguments, result), control events one line each, and
 * anything unknown as one compact JSON line. Stateful: feed it the events in seq order.
 */
import type { RunEvent } from "../../src/protocol/index.ts";
import { clip, clock, compact, type Paint } from "./format.ts";

/** Continuation lines of a message line up under its text, past the `HH:MM:SS ` prefix. */
const INDENT = " ".repeat(9);

type Data = Record<string, unknown>;

interface OpenLine {
  key: string;
  /** Line breaks seen but not written yet, so a message ending in "\n" leaves no empty line. */
  breaks: number;
}

interface ToolCall {
  name: string;
  args: string;
  shown: boolean;
}

const MESSAGE_DELTA = new Set(["TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK"]);
const REASONING_DELTA = new Set([
  "REASONING_MESSAGE_CONTENT",
  "REASONING_MESSAGE_CHUNK",
  "THINKING_TEXT_MESSAGE_CONTENT",
]);
const REASONING_END = new Set(["REASONING_MESSAGE_END", "THINKING_TEXT_MESSAGE_END"]);
/** Structure with nothing to show on its own; the deltas it frames are shown. */
const SILENT = new Set([
  "TEXT_MESSAGE_START",
  "TOOL_CALL_START",
  "TOOL_CALL_ARGS",
  "REASONING_START",
  "REASONING_END",
  "REASONING_MESSAGE_START",
  "THINKING_START",
  "THINKING_END",
  "THINKING_TEXT_MESSAGE_START",
]);

export class Transcript {
  private readonly runId: string;
  private readonly paint: Paint;
  private open: OpenLine | null = null;
  private readonly roles = new Map<string, string>();
  private readonly tools = new Map<string, ToolCall>();
  /** What each queued command was, so its ack can say so. */
  private readonly commands = new Map<string, string>();
  /** Approval requests asked for and not yet resolved or expired, in the order asked. */
  readonly pendingApprovals = new Set<string>();
  /** The tool call whose arguments are streaming, for the status line. */
  activeTool: string | null = null;

  constructor(runId: string, paint: Paint) {
    this.runId = runId;
    this.paint = paint;
  }

  /** The text for one event; it may end mid-line while a message is streaming. */
  render(event: RunEvent): string {
    const data = (event.data && typeof event.data === "object" ? event.data : {}) as Data;
    const type = event.type;
    if (MESSAGE_DELTA.has(type) && typeof data.delta === "string") {
      const id = str(data.messageId);
      if (id === undefined) return this.line(event, data.delta);
      if (typeof data.role === "string") this.roles.set(id, data.role);
      return this.stream(event, `message:${id}`, `${this.roles.get(id) ?? "assistant"}:`, data.delta, this.paint.bold);
    }
    if (REASONING_DELTA.has(type) && typeof data.delta === "string") {
      return this.stream(event, `reasoning:${str(data.messageId) ?? ""}`, "thinking:", data.delta, this.paint.dim);
    }
    if (type === "TEXT_MESSAGE_START") {
      const id = str(data.messageId);
      if (id !== undefined && typeof data.role === "string") this.roles.set(id, data.role);
    }
    if (type === "TEXT_MESSAGE_END") return this.endStream(`message:${str(data.messageId)}`);
    if (REASONING_END.has(type)) return this.endStream(`reasoning:${str(data.messageId) ?? ""}`);
    if (type === "TOOL_CALL_START" || type === "TOOL_CALL_ARGS") {
      this.toolDelta(type, data);
      return "";
    }
    if (SILENT.has(type)) return "";
    const text = this.describe(event, type, data);
    return text === null ? "" : this.line(event, text);
  }

  /** Ends a line left open by a streaming message (before exiting). */
  close(): string {
    if (!this.open) return "";
    this.open = null;
    return "\n";
  }

  private describe(event: RunEvent, type: string, data: Data): string | null {
    const p = this.paint;
    switch (type) {
      case "TOOL_CALL_END":
        return this.toolLine(str(data.toolCallId) ?? "");
      case "TOOL_CALL_RESULT": {
        const id = str(data.toolCallId) ?? "";
        const call = this.tools.get(id);
        const head = call && !call.shown ? `${this.toolLine(id)}\n` : "";
        return `${head}  ↳ ${resultSummary(data.content)}`;
      }
      case "RUN_STARTED":
        return p.dim("agent started");
      case "RUN_FINISHED":
        return p.dim(`agent finished${data.result === undefined ? "" : ` · ${compact(data.result, 120)}`}`);
      case "RUN_ERROR":
        return p.red(`agent error: ${str(data.message) ?? compact(data)}${data.code ? ` (${data.code})` : ""}`);
      case "STEP_STARTED":
      case "STEP_FINISHED":
        return p.dim(`step ${str(data.stepName) ?? "?"} ${type === "STEP_STARTED" ? "started" : "finished"}`);
      case "RAW":
        return p.dim(`raw${data.source ? ` ${data.source}` : ""}: ${compact(data.event ?? data, 200)}`);
      case "CUSTOM":
        return `${p.magenta(str(data.name) ?? "custom")} ${compact(data.value ?? null, 200)}`;
      case "approval.requested":
        return this.approvalRequested(data);
      default:
        return event.source === "control" ? this.control(type, data) : this.unknown(event);
    }
  }

  private control(type: string, data: Data): string {
    const p = this.paint;
    switch (type) {
      case "run.created": {
        const agent = data.agent && typeof data.agent === "object" ? (data.agent as Data).name : data.agent;
        const parts = [`run ${str(data.runId) ?? this.runId} created`];
        if (agent !== undefined && agent !== null) parts.push(`agent ${compact(agent, 60)}`);
        if (data.input !== undefined && data.input !== null) parts.push(`input ${compact(data.input, 120)}`);
        return p.magenta(parts.join(" · "));
      }
      case "run.claimed": {
        const parts = [`claimed by ${str(data.runnerId) ?? "?"}`, `epoch ${data.epoch}`];
        if (typeof data.previousEpoch === "number" && data.previousEpoch > 0)
          parts.push(`replaces epoch ${data.previousEpoch}`);
        const unknown = Array.isArray(data.unknownCommands) ? data.unknownCommands.length : data.unknownCommands;
        if (typeof unknown === "number" && unknown > 0) parts.push(`${unknown} command(s) of unknown fate`);
        return p.magenta(parts.join(" · "));
      }
      case "run.stalled":
        return p.yellow(`runner stalled · epoch ${data.epoch}${data.reason ? ` · ${data.reason}` : ""}`);
      case "run.resumed":
        return p.magenta(`runner back · epoch ${data.epoch}`);
      case "command.queued": {
        const id = str(data.commandId) ?? "?";
        const summary = commandSummary(data);
        this.commands.set(id, summary);
        // ids the edge made up itself start with "~"; the operator's own are worth showing
        return p.cyan(`→ ${summary}${id.startsWith("~") ? "" : ` · ${id}`}`);
      }
      case "command.acked": {
        const id = str(data.commandId) ?? "?";
        return p.dim(`  ${this.commands.get(id) ?? `command ${id}`}: ${str(data.state) ?? "?"}`);
      }
      case "approval.resolved": {
        const id = str(data.requestId) ?? "?";
        this.pendingApprovals.delete(id);
        const verdict = data.decision === "approve" ? p.green("approved") : p.red("denied");
        return `approval ${id} ${verdict}${data.reason ? ` · ${data.reason}` : ""}`;
      }
      case "approval.expired": {
        const id = str(data.requestId) ?? "?";
        this.pendingApprovals.delete(id);
        return p.yellow(`approval ${id} expired → denied`);
      }
      case "run.finished":
        return finishedLine(data.outcome, p);
      default:
        return this.unknown({ type, data });
    }
  }

  private approvalRequested(data: Data): string {
    const id = str(data.requestId);
    if (id === undefined) return this.unknown({ type: "approval.requested", data });
    this.pendingApprovals.add(id);
    const { requestId: _, toolName, toolCallName, input, args, ...rest } = data;
    const name = str(toolName) ?? str(toolCallName);
    const detail = input ?? args ?? (Object.keys(rest).length > 0 ? rest : undefined);
    const what = [name, detail === undefined ? undefined : compact(detail, 120)].filter(Boolean).join(" ");
    const hint = `agent-run approve ${this.runId} ${id}  (or deny)`;
    return `${this.paint.yellow(`approval ${id} requested`)}${what ? ` · ${what}` : ""}\n${this.paint.dim(hint)}`;
  }

  private unknown(event: { type: string; data: unknown }): string {
    return this.paint.dim(clip(JSON.stringify({ type: event.type, data: event.data }), 500));
  }

  private toolDelta(type: string, data: Data): void {
    const id = str(data.toolCallId) ?? "";
    const call = this.tools.get(id) ?? { name: "?", args: "", shown: false };
    if (type === "TOOL_CALL_START") call.name = str(data.toolCallName) ?? str(data.name) ?? call.name;
    if (type === "TOOL_CALL_ARGS" && typeof data.delta === "string") call.args += data.delta;
    this.tools.set(id, call);
    this.activeTool = call.name;
  }

  private toolLine(id: string): string {
    const call = this.tools.get(id) ?? { name: "?", args: "", shown: false };
    call.shown = true;
    this.tools.set(id, call);
    this.activeTool = null;
    let args = call.args;
    try {
      args = JSON.stringify(JSON.parse(call.args));
    } catch {
      // not JSON (or not finished): shown as it came
    }
    return `${this.paint.cyan(`tool ${call.name}`)}${args ? ` ${clip(args, 160)}` : ""}`;
  }

  /** A whole line of its own, closing any message line left open. */
  private line(event: RunEvent, text: string): string {
    return `${this.close()}${this.paint.dim(clock(event.time))} ${text.replace(/\n/g, `\n${INDENT}`)}\n`;
  }

  private stream(event: RunEvent, key: string, label: string, delta: string, style: (s: string) => string): string {
    let out = "";
    if (this.open?.key !== key) {
      out += `${this.close()}${this.paint.dim(clock(event.time))} ${label} `;
      this.open = { key, breaks: 0 };
    }
    const open = this.open as OpenLine;
    delta.split("\n").forEach((part, i) => {
      if (i > 0) open.breaks++;
      if (part === "") return;
      out += `\n${INDENT}`.repeat(open.breaks) + style(part);
      open.breaks = 0;
    });
    return out;
  }

  private endStream(key: string): string {
    return this.open?.key === key ? this.close() : "";
  }
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function commandSummary(data: Data): string {
  switch (data.type) {
    case "input":
      return `input ${JSON.stringify(clip(str(data.text) ?? "", 120))}`;
    case "approval":
      return `${data.decision === "approve" ? "approve" : "deny"} ${str(data.requestId) ?? "?"}${data.reason ? ` (${data.reason})` : ""}`;
    case "cancel":
      return `cancel${data.reason ? ` (${data.reason})` : ""}`;
    default:
      return String(data.type);
  }
}

function resultSummary(content: unknown): string {
  const text = typeof content === "string" ? content : (JSON.stringify(content) ?? "");
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const more = lines.length > 1 ? ` (+${lines.length - 1} lines)` : "";
  return `${clip((lines[0] ?? "").trim(), 160)}${more}`;
}

export function finishedLine(outcome: unknown, p: Paint): string {
  const o = (outcome && typeof outcome === "object" ? outcome : {}) as Data;
  const status = str(o.status) ?? "?";
  const error = o.error && typeof o.error === "object" ? (o.error as Data) : null;
  const parts = [`run finished · ${status}`];
  if (typeof o.exitCode === "number") parts.push(`exit ${o.exitCode}`);
  if (error) parts.push(`${error.code}: ${clip(str(error.message) ?? "", 300)}`);
  const text = parts.join(" · ");
  return status === "succeeded" ? p.green(text) : p.red(text);
}
