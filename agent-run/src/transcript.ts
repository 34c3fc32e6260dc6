/**
 * Turns a run's events into a readable transcript: AG-UI text and reasoning joined into one line
 * per message (streamed or whole, `*_CHUNK`), each tool call one line (name and arguments, then
 * `↳` its result, named when other lines came between), approvals with the tool call they are
 * about, turns and the agent's session as short lines, control events one line each, RAW as the
 * agent's own message in compact JSON, anything unknown as one compact JSON line. Stateful: feed
 * it the events in seq order.
 */
import { AGENT_USAGE, type RunEvent, USAGE_MEMBER, UsageDelta } from "../../src/protocol/index.ts";
import { clip, clock, compact, type Paint } from "./format.ts";
import { UsageTally, usageText } from "./usage-text.ts";

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
/** Events after which nothing of the turn streams any more. */
const TURN_ENDS = new Set(["RUN_FINISHED", "RUN_ERROR", "run.finished"]);
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
  /** What the last line written was about (`tool:<id>`, `message:<id>`, …), so a result can say whose it is. */
  private lastKey: string | null = null;
  private readonly roles = new Map<string, string>();
  private readonly tools = new Map<string, ToolCall>();
  /** What each queued command was, so its ack can say so. */
  private readonly commands = new Map<string, string>();
  /** Approval requests asked for and not yet resolved or expired, in the order asked. */
  readonly pendingApprovals = new Set<string>();
  /** The run's usage as its reports went by (agent.usage, or another event's agentUsage). */
  readonly usage = new UsageTally();
  /** The tool call streaming its arguments or running, for the status line. */
  activeTool: string | null = null;

  constructor(runId: string, paint: Paint) {
    this.runId = runId;
    this.paint = paint;
  }

  /** The text for one event; it may end mid-line while a message is streaming. */
  render(event: RunEvent): string {
    const data = (event.data && typeof event.data === "object" ? event.data : {}) as Data;
    const type = event.type;
    const reported = UsageDelta.safeParse(type === AGENT_USAGE ? data : data[USAGE_MEMBER]);
    if (event.source === "runner" && (type === AGENT_USAGE || data[USAGE_MEMBER] !== undefined) && reported.success) {
      this.usage.add(reported.data);
    }
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
    if (type === "TOOL_CALL_CHUNK") return this.toolChunk(event, data);
    if (SILENT.has(type)) return "";
    const cut = TURN_ENDS.has(type) ? this.unfinishedTools(event) : "";
    const text = this.describe(event, type, data);
    const about = str(data.toolCallId);
    return (
      cut +
      (text === null ? "" : this.line(event, text, type.startsWith("TOOL_CALL_") && about ? `tool:${about}` : null))
    );
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
      case "TOOL_CALL_END": {
        const id = str(data.toolCallId) ?? "";
        return this.tools.get(id)?.shown ? null : this.toolLine(id);
      }
      case "TOOL_CALL_RESULT":
        return this.toolResult(str(data.toolCallId) ?? "", data.content);
      case "RUN_STARTED":
        return p.dim("turn started");
      case "RUN_FINISHED": {
        const outcome = str((data.outcome as Data | undefined)?.type);
        const how = outcome && outcome !== "success" ? ` · ${outcome}` : "";
        const result = data.result === undefined ? "" : ` · ${compact(data.result, 120)}`;
        return p.dim(`turn finished${how}${result}`);
      }
      case "RUN_ERROR": {
        const code = data.code ? ` (${data.code})` : "";
        return p.red(`agent error: ${str(data.message) ?? compact(data)}${code}`);
      }
      case "agent.session":
        return p.dim(`session ${str(data.provider) ?? "?"} ${str(data.id) ?? "?"}`);
      case "STEP_STARTED":
      case "STEP_FINISHED":
        return p.dim(`step ${str(data.stepName) ?? "?"} ${type === "STEP_STARTED" ? "started" : "finished"}`);
      case "RAW":
        // the agent's own message, as it printed it
        return p.dim(`raw${data.source ? ` ${data.source}` : ""}: ${compact(data.event ?? data, 200)}`);
      case "CUSTOM":
        return `${p.magenta(str(data.name) ?? "custom")} ${compact(data.value ?? null, 200)}`;
      case "approval.requested":
        return this.approvalRequested(data);
      case AGENT_USAGE:
        return this.paint.dim(`usage · run so far ${usageText(this.usage.total)}`);
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
      case "run.recovering":
        return p.yellow(`recovering · ${str(data.mode) ?? "?"}${data.reason ? ` · ${data.reason}` : ""}`);
      case "run.recovery.decided":
        return p.magenta(`recovery decided · ${str(data.action) ?? "?"} · ${str(data.commandId) ?? "?"}`);
      case "run.generation.started": {
        const session = data.nativeSession as Data | null | undefined;
        const from = session?.id ? `resumes ${str(session.provider) ?? "?"} ${str(session.id)}` : "starts over";
        return p.magenta(`generation ${data.generation} · ${str(data.mode) ?? "?"} · ${from}`);
      }
      case "run.checkpoint":
        return p.dim(`checkpoint · generation ${data.generation} up to #${data.sourceSeq} · ${data.bytes} bytes`);
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
        return p.yellow(`approval ${id} expired → denied${data.reason ? ` · ${data.reason}` : ""}`);
      }
      case "run.finished":
        return this.usage.reports > 0
          ? `${finishedLine(data.outcome, p)}\n${p.dim(`usage · ${usageText(this.usage.total)}`)}`
          : finishedLine(data.outcome, p);
      default:
        return this.unknown({ type, data });
    }
  }

  private approvalRequested(data: Data): string {
    const id = str(data.requestId);
    if (id === undefined) return this.unknown({ type: "approval.requested", data });
    this.pendingApprovals.add(id);
    // the fields that say what is asked; the rest (ids, the native message) stays in --json
    const { requestId: _, rawEvent: _native, timestamp: _at, toolCallId, reason, ...asked } = data;
    const { toolName, toolCallName, tool, input, args, command, ...rest } = asked;
    const call = typeof toolCallId === "string" ? this.tools.get(toolCallId) : undefined;
    const name = str(toolName) ?? str(toolCallName) ?? str(tool) ?? call?.name;
    const detail = input ?? args ?? command ?? (call || Object.keys(rest).length === 0 ? undefined : rest);
    const what = [name, detail === undefined ? undefined : compact(detail, 120)].filter(Boolean).join(" ");
    const why = typeof reason === "string" ? ` (${clip(reason, 120)})` : "";
    const hint = `agent-run approve ${this.runId} ${id}  (or deny)`;
    return `${this.paint.yellow(`approval ${id} requested`)}${what ? ` · ${what}` : ""}${why}\n${this.paint.dim(hint)}`;
  }

  private unknown(event: { type: string; data: unknown }): string {
    return this.paint.dim(clip(JSON.stringify({ type: event.type, data: event.data }), 500));
  }

  private toolDelta(type: string, data: Data): ToolCall {
    const id = str(data.toolCallId) ?? "";
    const call = this.tools.get(id) ?? { name: "?", args: "", shown: false };
    if (type !== "TOOL_CALL_ARGS") call.name = str(data.toolCallName) ?? str(data.name) ?? call.name;
    if (type !== "TOOL_CALL_START" && typeof data.delta === "string") call.args += data.delta;
    this.tools.set(id, call);
    this.activeTool = call.name;
    return call;
  }

  /** A whole tool call (or a piece of one): its line once its arguments are whole JSON. */
  private toolChunk(event: RunEvent, data: Data): string {
    const call = this.toolDelta("TOOL_CALL_CHUNK", data);
    if (call.shown || !(call.args === "" ? data.delta === undefined : parses(call.args))) return "";
    const id = str(data.toolCallId) ?? "";
    return this.line(event, this.toolLine(id), `tool:${id}`);
  }

  private toolLine(id: string): string {
    const call = this.tools.get(id) ?? { name: "?", args: "", shown: false };
    call.shown = true;
    this.tools.set(id, call);
    let args = call.args;
    try {
      args = JSON.stringify(JSON.parse(call.args));
    } catch {
      // not JSON (or not finished): shown as it came
    }
    return `${this.paint.cyan(`tool ${call.name}`)}${args ? ` ${clip(args, 160)}` : ""}`;
  }

  /** Lines for the tool calls a turn ended in the middle of streaming, which no line showed yet. */
  private unfinishedTools(event: RunEvent): string {
    this.activeTool = null;
    let out = "";
    for (const [id, call] of this.tools) {
      if (!call.shown) out += this.line(event, `${this.toolLine(id)} ${this.paint.dim("(unfinished)")}`);
    }
    return out;
  }

  /** `↳` the result under its tool line, or naming its tool when other lines came between. */
  private toolResult(id: string, content: unknown): string {
    this.activeTool = null;
    const call = this.tools.get(id);
    const head = call && !call.shown ? `${this.toolLine(id)}\n` : "";
    const whose = head === "" && this.lastKey !== `tool:${id}` ? `${call?.name ?? "tool"}: ` : "";
    return `${head}  ↳ ${whose}${resultSummary(content)}`;
  }

  /** A whole line of its own, closing any message line left open. */
  private line(event: RunEvent, text: string, key: string | null = null): string {
    const out = `${this.close()}${this.paint.dim(clock(event.time))} ${text.replace(/\n/g, `\n${INDENT}`)}\n`;
    this.lastKey = key;
    return out;
  }

  private stream(event: RunEvent, key: string, label: string, delta: string, style: (s: string) => string): string {
    let out = "";
    if (this.open?.key !== key) {
      out += `${this.close()}${this.paint.dim(clock(event.time))} ${label} `;
      this.open = { key, breaks: 0 };
      this.lastKey = key;
    }
    const open = this.open as OpenLine;
    delta.split("\n").forEach((part, i) => {
      if (i > 0) open.breaks++;
      if (part === "") return;
      // blank lines stay empty: no indent left trailing on them
      out += `${"\n".repeat(open.breaks)}${open.breaks > 0 ? INDENT : ""}${style(part)}`;
      open.breaks = 0;
    });
    return out;
  }

  private endStream(key: string): string {
    return this.open?.key === key ? this.close() : "";
  }
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
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
