/**
 * Prints a run's transcript, as the SDK's fold (`@agent-run/client/transcript`) assembles it: AG-UI
 * text and reasoning as one line per message (streamed or whole, `*_CHUNK`), each tool call one
 * line (name and arguments, then `↳` its result, named when other lines came between), approvals
 * with the tool call they are about, turns and the agent's session as short lines, control events
 * one line each, RAW as the agent's own message in compact JSON, anything unknown as one compact
 * JSON line. What is its own is the terminal: open lines, colours, what a line says. Feed it the
 * events in seq order.
 */
import { fields, Transcript as Fold, type ToolRow, TURN_ENDS } from "@agent-run/client/transcript";
import {
  AgentEventType,
  AguiEventFamily,
  AguiEventType as Agui,
  ControlEventType,
  type RunEvent,
} from "../../src/protocol/index.ts";
import { clip, clock, compact, type Paint } from "./format.ts";
import { usageText } from "./usage-text.ts";

/** Continuation lines of a message line up under its text, past the `HH:MM:SS ` prefix. */
const INDENT = " ".repeat(9);

type Data = Record<string, unknown>;

interface OpenLine {
  key: string;
  /** Line breaks seen but not written yet, so a message ending in "\n" leaves no empty line. */
  breaks: number;
}

const MESSAGE_DELTA: ReadonlySet<string> = new Set([Agui.TEXT_MESSAGE_CONTENT, Agui.TEXT_MESSAGE_CHUNK]);
const REASONING_DELTA: ReadonlySet<string> = new Set([
  Agui.REASONING_MESSAGE_CONTENT,
  Agui.REASONING_MESSAGE_CHUNK,
  Agui.THINKING_TEXT_MESSAGE_CONTENT,
]);
const REASONING_END: ReadonlySet<string> = new Set([Agui.REASONING_MESSAGE_END, Agui.THINKING_TEXT_MESSAGE_END]);
/** Structure with nothing to show on its own; the deltas it frames are shown. */
const SILENT: ReadonlySet<string> = new Set([
  Agui.TEXT_MESSAGE_START,
  Agui.TOOL_CALL_START,
  Agui.TOOL_CALL_ARGS,
  Agui.REASONING_START,
  Agui.REASONING_END,
  Agui.REASONING_MESSAGE_START,
  Agui.THINKING_START,
  Agui.THINKING_END,
  Agui.THINKING_TEXT_MESSAGE_START,
]);

export class Transcript {
  private readonly runId: string;
  private readonly paint: Paint;
  private open: OpenLine | null = null;
  /** What the last line written was about (`tool:<id>`, `message:<id>`, …), so a result can say whose it is. */
  private lastKey: string | null = null;
  private readonly fold = new Fold();
  /** Tool calls whose line is printed. */
  private readonly shown = new Set<string>();

  constructor(runId: string, paint: Paint) {
    this.runId = runId;
    this.paint = paint;
  }

  /** Approval requests asked for and not yet resolved or expired, in the order asked. */
  get pendingApprovals(): ReadonlySet<string> {
    return this.fold.pendingApprovals;
  }

  /** The run's usage as its reports went by. */
  get usage() {
    return this.fold.usage;
  }

  /** The tool call streaming its arguments or running, for the status line. */
  get activeTool(): string | null {
    return this.fold.activeTool ? (this.fold.activeTool.name ?? "?") : null;
  }

  /** The text for one event; it may end mid-line while a message is streaming. */
  render(event: RunEvent): string {
    const row = this.fold.add(event);
    const data = fields(event.data);
    const type = event.type;
    if (MESSAGE_DELTA.has(type) && typeof data.delta === "string") {
      if (row.kind !== "message" || !row.identified) return this.line(event, data.delta);
      return this.stream(event, row.key, `${row.role}:`, data.delta, this.paint.bold);
    }
    if (REASONING_DELTA.has(type) && typeof data.delta === "string") {
      return this.stream(event, `reasoning:${str(data.messageId) ?? ""}`, "thinking:", data.delta, this.paint.dim);
    }
    if (type === Agui.TEXT_MESSAGE_END) return this.endStream(row.key);
    if (REASONING_END.has(type)) return this.endStream(`reasoning:${str(data.messageId) ?? ""}`);
    if (type === Agui.TOOL_CALL_CHUNK) return this.toolChunk(event, data);
    if (SILENT.has(type)) return "";
    const cut = TURN_ENDS.has(type) ? this.unfinishedTools(event) : "";
    const text = this.describe(event, type, data);
    const about = str(data.toolCallId);
    return (
      cut +
      (text === null
        ? ""
        : this.line(event, text, type.startsWith(AguiEventFamily.TOOL_CALL) && about ? `tool:${about}` : null))
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
      case Agui.TOOL_CALL_END: {
        const id = str(data.toolCallId) ?? "";
        return this.shown.has(id) ? null : this.toolLine(id);
      }
      case Agui.TOOL_CALL_RESULT:
        return this.toolResult(str(data.toolCallId) ?? "", data.content);
      case Agui.RUN_STARTED:
        return p.dim("turn started");
      case Agui.RUN_FINISHED: {
        const outcome = str((data.outcome as Data | undefined)?.type);
        const how = outcome && outcome !== "success" ? ` · ${outcome}` : "";
        const result = data.result === undefined ? "" : ` · ${compact(data.result, 120)}`;
        return p.dim(`turn finished${how}${result}`);
      }
      case Agui.RUN_ERROR: {
        const code = data.code ? ` (${data.code})` : "";
        return p.red(`agent error: ${str(data.message) ?? compact(data)}${code}`);
      }
      case AgentEventType.AGENT_SESSION:
        return p.dim(`session ${str(data.provider) ?? "?"} ${str(data.id) ?? "?"}`);
      case Agui.STEP_STARTED:
      case Agui.STEP_FINISHED:
        return p.dim(`step ${str(data.stepName) ?? "?"} ${type === Agui.STEP_STARTED ? "started" : "finished"}`);
      case Agui.RAW:
        // the agent's own message, as it printed it
        return p.dim(`raw${data.source ? ` ${data.source}` : ""}: ${compact(data.event ?? data, 200)}`);
      case Agui.CUSTOM:
        return `${p.magenta(str(data.name) ?? "custom")} ${compact(data.value ?? null, 200)}`;
      case AgentEventType.APPROVAL_REQUESTED:
        return this.approvalRequested(data);
      case AgentEventType.AGENT_USAGE:
        return this.paint.dim(`usage · run so far ${usageText(this.usage.total)}`);
      default:
        return event.source === "control" ? this.control(type, data) : this.unknown(event);
    }
  }

  private control(type: string, data: Data): string {
    const p = this.paint;
    switch (type) {
      case ControlEventType.RUN_CREATED: {
        const agent = data.agent && typeof data.agent === "object" ? (data.agent as Data).name : data.agent;
        const parts = [`run ${str(data.runId) ?? this.runId} created`];
        if (agent !== undefined && agent !== null) parts.push(`agent ${compact(agent, 60)}`);
        if (data.input !== undefined && data.input !== null) parts.push(`input ${compact(data.input, 120)}`);
        return p.magenta(parts.join(" · "));
      }
      case ControlEventType.RUN_CLAIMED: {
        const parts = [`claimed by ${str(data.runnerId) ?? "?"}`, `epoch ${data.epoch}`];
        if (typeof data.previousEpoch === "number" && data.previousEpoch > 0)
          parts.push(`replaces epoch ${data.previousEpoch}`);
        const unknown = Array.isArray(data.unknownCommands) ? data.unknownCommands.length : data.unknownCommands;
        if (typeof unknown === "number" && unknown > 0) parts.push(`${unknown} command(s) of unknown fate`);
        return p.magenta(parts.join(" · "));
      }
      case ControlEventType.RUN_STALLED:
        return p.yellow(`runner stalled · epoch ${data.epoch}${data.reason ? ` · ${data.reason}` : ""}`);
      case ControlEventType.RUN_RESUMED:
        return p.magenta(`runner back · epoch ${data.epoch}`);
      case ControlEventType.RUN_RECOVERING:
        return p.yellow(`recovering · ${str(data.mode) ?? "?"}${data.reason ? ` · ${data.reason}` : ""}`);
      case ControlEventType.RUN_RECOVERY_DECIDED:
        return p.magenta(`recovery decided · ${str(data.action) ?? "?"} · ${str(data.commandId) ?? "?"}`);
      case ControlEventType.RUN_GENERATION_STARTED: {
        const session = data.nativeSession as Data | null | undefined;
        const from = session?.id ? `resumes ${str(session.provider) ?? "?"} ${str(session.id)}` : "starts over";
        return p.magenta(`generation ${data.generation} · ${str(data.mode) ?? "?"} · ${from}`);
      }
      case ControlEventType.RUN_CHECKPOINT:
        return p.dim(`checkpoint · generation ${data.generation} up to #${data.sourceSeq} · ${data.bytes} bytes`);
      case ControlEventType.COMMAND_QUEUED: {
        const id = str(data.commandId) ?? "?";
        const summary = commandSummary(data);
        // ids the edge made up itself start with "~"; the operator's own are worth showing
        return p.cyan(`→ ${summary}${id.startsWith("~") ? "" : ` · ${id}`}`);
      }
      case ControlEventType.COMMAND_ACKED: {
        const id = str(data.commandId) ?? "?";
        const queued = this.fold.commands.get(id);
        return p.dim(`  ${queued ? commandSummary(queued) : `command ${id}`}: ${str(data.state) ?? "?"}`);
      }
      case ControlEventType.APPROVAL_RESOLVED: {
        const id = str(data.requestId) ?? "?";
        const verdict = data.decision === "approve" ? p.green("approved") : p.red("denied");
        return `approval ${id} ${verdict}${data.reason ? ` · ${data.reason}` : ""}`;
      }
      case ControlEventType.APPROVAL_EXPIRED: {
        const id = str(data.requestId) ?? "?";
        return p.yellow(`approval ${id} expired → denied${data.reason ? ` · ${data.reason}` : ""}`);
      }
      case ControlEventType.RUN_FINISHED:
        return this.usage.reports > 0
          ? `${finishedLine(data.outcome, p)}\n${p.dim(`usage · ${usageText(this.usage.total)}`)}`
          : finishedLine(data.outcome, p);
      default:
        return this.unknown({ type, data });
    }
  }

  private approvalRequested(data: Data): string {
    const id = str(data.requestId);
    if (id === undefined) return this.unknown({ type: AgentEventType.APPROVAL_REQUESTED, data });
    // the fields that say what is asked; the rest (ids, the native message) stays in --json
    const { requestId: _, rawEvent: _native, timestamp: _at, toolCallId, reason, ...asked } = data;
    const { toolName, toolCallName, tool, input, args, command, ...rest } = asked;
    const call = typeof toolCallId === "string" ? this.fold.tools.get(toolCallId) : undefined;
    const name = str(toolName) ?? str(toolCallName) ?? str(tool) ?? call?.name ?? (call ? "?" : undefined);
    const detail = input ?? args ?? command ?? (call || Object.keys(rest).length === 0 ? undefined : rest);
    const what = [name, detail === undefined ? undefined : compact(detail, 120)].filter(Boolean).join(" ");
    const why = typeof reason === "string" ? ` (${clip(reason, 120)})` : "";
    const hint = `agent-run approve ${this.runId} ${id}  (or deny)`;
    return `${this.paint.yellow(`approval ${id} requested`)}${what ? ` · ${what}` : ""}${why}\n${this.paint.dim(hint)}`;
  }

  private unknown(event: { type: string; data: unknown }): string {
    return this.paint.dim(clip(JSON.stringify({ type: event.type, data: event.data }), 500));
  }

  /** A whole tool call (or a piece of one): its line once its arguments are whole JSON. */
  private toolChunk(event: RunEvent, data: Data): string {
    const id = str(data.toolCallId) ?? "";
    const args = this.fold.tools.get(id)?.args ?? "";
    if (this.shown.has(id) || !(args === "" ? data.delta === undefined : parses(args))) return "";
    return this.line(event, this.toolLine(id), `tool:${id}`);
  }

  private toolLine(id: string): string {
    const call: Pick<ToolRow, "name" | "args"> = this.fold.tools.get(id) ?? { name: null, args: "" };
    this.shown.add(id);
    let args = call.args;
    try {
      args = JSON.stringify(JSON.parse(call.args));
    } catch {
      // not JSON (or not finished): shown as it came
    }
    return `${this.paint.cyan(`tool ${call.name ?? "?"}`)}${args ? ` ${clip(args, 160)}` : ""}`;
  }

  /** Lines for the tool calls a turn ended in the middle of streaming, which no line showed yet. */
  private unfinishedTools(event: RunEvent): string {
    let out = "";
    for (const id of this.fold.tools.keys()) {
      if (!this.shown.has(id)) out += this.line(event, `${this.toolLine(id)} ${this.paint.dim("(unfinished)")}`);
    }
    return out;
  }

  /** `↳` the result under its tool line, or naming its tool when other lines came between. */
  private toolResult(id: string, content: unknown): string {
    const call = this.fold.tools.get(id);
    const head = call && !this.shown.has(id) ? `${this.toolLine(id)}\n` : "";
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
