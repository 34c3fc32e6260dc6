import {
  AgentEventType as Agent,
  AguiEventFamily as Family,
  AguiEventType as Agui,
  ControlEventType as Control,
  CONTROL_EVENT_TYPES,
  type RunEvent,
  USAGE_MEMBER,
  UsageDelta,
} from "../../../src/protocol/index.ts";
import { type Fields, fields, inline, text } from "./fields.ts";
import { toolHeadline } from "./headline.ts";
import type { AgentSession, Category, EventRow, MessageRow, ReasoningRow, Row, StreamedRow, ToolRow } from "./rows.ts";
import { UsageTally } from "./usage.ts";

/**
 * A run's events folded the way an AG-UI client assembles a conversation: text and reasoning
 * joined into one row per messageId, whether they stream (START / CONTENT / END) or arrive whole
 * (the `*_CHUNK` shorthands); a tool call (START / ARGS / END or TOOL_CALL_CHUNK, then RESULT) as
 * one row per toolCallId, linked both ways to the approval that names it; everything else one
 * row per event. A row sits at its first event; later events of the same message or tool call
 * update it in place. Alongside the rows: approvals still pending, queued commands, turns, the
 * agent's session and the usage reported so far. Feed it the events in seq order.
 */
export class Transcript {
  readonly rows: Row[] = [];
  /** Tool calls by toolCallId, in the order they started. */
  readonly tools = new Map<string, ToolRow>();
  /** Approval requests asked for and not yet resolved or expired, in the order asked. */
  readonly pendingApprovals = new Set<string>();
  /** Each queued command's data by commandId, so its ack can say what it was. */
  readonly commands = new Map<string, Fields>();
  /** The run's usage as its reports went by (agent.usage, or another runner event's agentUsage). */
  readonly usage = new UsageTally();
  /** The tool call streaming its arguments or running, until its result or the turn's end. */
  activeTool: ToolRow | null = null;
  /** Turns started (RUN_STARTED), and whether one is under way. */
  turns = 0;
  inTurn = false;
  session: AgentSession | null = null;

  private readonly groups = new Map<string, Row>();
  private readonly bySeq = new Map<number, Row>();
  /** Rows still streaming, marked stopped when their turn ends first. */
  private readonly open = new Set<StreamedRow>();
  /** Approval requests by the tool call they name, and tool rows by the request about them. */
  private readonly approvalRows = new Map<string, EventRow>();
  private readonly toolOfRequest = new Map<string, ToolRow>();
  /** The open run of id-less text deltas (ndjson output lines), joined while nothing interrupts them. */
  private plainText: MessageRow | null = null;
  /** Who claimed each epoch, for a takeover row to say whom it replaced. */
  private readonly claimedBy = new Map<number, string>();
  /** The open THINKING_* block, which AG-UI does not give an id. */
  private thinking: ReasoningRow | null = null;

  constructor(events: readonly RunEvent[] = []) {
    for (const event of events) this.add(event);
  }

  /** The row that shows the event with this seq. */
  rowOf(seq: number): Row | undefined {
    return this.bySeq.get(seq);
  }

  /** Folds in the next event; returns the row that shows it. */
  add(event: RunEvent): Row {
    const data = fields(event.data);
    this.tally(event, data);
    const row = this.place(event, data);
    if (row !== this.plainText) this.plainText = null;
    this.bySeq.set(event.seq, row);
    if (TURN_ENDS.has(event.type)) this.endTurn();
    return row;
  }

  private tally(event: RunEvent, data: Fields): void {
    const type = event.type;
    if (event.source !== "runner" || (type !== Agent.AGENT_USAGE && data[USAGE_MEMBER] === undefined)) return;
    const reported = UsageDelta.safeParse(type === Agent.AGENT_USAGE ? data : data[USAGE_MEMBER]);
    if (reported.success) this.usage.add(reported.data);
  }

  private place(event: RunEvent, data: Fields): Row {
    const type = event.type;
    if (type.startsWith(Family.TEXT_MESSAGE)) {
      const id = text(data.messageId);
      if (id) return this.message(`msg:${id}`, event, data);
      if (type === Agui.TEXT_MESSAGE_CONTENT || type === Agui.TEXT_MESSAGE_CHUNK) {
        if (this.plainText) return this.join(this.plainText, event, (row) => (row.text += text(data.delta) ?? ""));
        const row = this.message(`plain:${event.seq}`, event, data);
        this.plainText = row;
        return row;
      }
    }
    if (type.startsWith(Family.REASONING) && text(data.messageId))
      return this.reasoning(`why:${data.messageId}`, event, data);
    if (type.startsWith(Family.THINKING)) return this.think(event, data);
    if (type.startsWith(Family.TOOL_CALL) && text(data.toolCallId)) return this.tool(event, data);
    if (type === Agui.RUN_ERROR) return this.single(event, "error", "errors");
    if (type === Agui.RUN_STARTED) {
      this.turns++;
      this.inTurn = true;
    }
    if (LIFECYCLE.has(type)) return this.single(event, "lifecycle", "control");
    if (type === Agent.AGENT_SESSION) {
      this.session = { provider: text(data.provider), id: text(data.id) };
      return this.single(event, "session", "control");
    }
    if (type === Agent.APPROVAL_REQUESTED) return this.approvalRequested(event, data);
    if (type === Control.APPROVAL_RESOLVED || type === Control.APPROVAL_EXPIRED) this.approvalSettled(type, data);
    if (type === Control.COMMAND_QUEUED) this.commands.set(text(data.commandId) ?? "?", data);
    if (type === Control.RUN_CLAIMED) return this.claimed(event, data);
    if (CONTROL_EVENT_TYPES.has(type)) return this.single(event, "control", controlCategory(event));
    return this.single(event, "raw", "other");
  }

  private claimed(event: RunEvent, data: Fields): EventRow {
    const row = this.single(event, "control", "control");
    const replaced = this.claimedBy.get(Number(data.previousEpoch));
    if (replaced) row.replaced = replaced;
    if (typeof data.runnerId === "string") this.claimedBy.set(Number(data.epoch), data.runnerId);
    return row;
  }

  private single(event: RunEvent, kind: EventRow["kind"], category: Category): EventRow {
    const row: EventRow = {
      kind,
      key: `e:${event.seq}`,
      firstSeq: event.seq,
      events: [event],
      version: 0,
      category,
      event,
    };
    this.rows.push(row);
    return row;
  }

  private join<R extends Row>(row: R, event: RunEvent, update: (row: R) => void): R {
    row.events.push(event);
    update(row);
    if (row.kind === "message" || row.kind === "reasoning" || row.kind === "tool") {
      row.stopped = false;
      const done = row.kind === "tool" ? row.result !== null : row.complete;
      if (done) this.open.delete(row);
      else this.open.add(row);
    }
    row.version++;
    return row;
  }

  private group<R extends Row>(key: string, create: () => R): R {
    let row = this.groups.get(key) as R | undefined;
    if (!row) {
      row = create();
      this.groups.set(key, row);
      this.rows.push(row);
    }
    return row;
  }

  private base(key: string, event: RunEvent, category: Category) {
    return { key, firstSeq: event.seq, events: [], version: 0, category, complete: false, stopped: false };
  }

  private message(key: string, event: RunEvent, data: Fields): MessageRow {
    const identified = key.startsWith("msg:");
    const create = (): MessageRow => ({
      ...this.base(key, event, "messages"),
      kind: "message",
      role: identified ? "assistant" : "output",
      identified,
      text: "",
    });
    return this.join(this.group(key, create), event, (r) => {
      const role = text(data.role);
      if (role) r.role = role;
      // Text without an id is an agent's plain output, each piece whole.
      if (!identified) r.complete = true;
      if (event.type === Agui.TEXT_MESSAGE_CONTENT || event.type === Agui.TEXT_MESSAGE_CHUNK)
        r.text += text(data.delta) ?? "";
      // A chunk is a whole message (or a whole piece of one): nothing is left streaming.
      if (event.type === Agui.TEXT_MESSAGE_END || event.type === Agui.TEXT_MESSAGE_CHUNK) r.complete = true;
    });
  }

  private newReasoning(key: string, event: RunEvent): ReasoningRow {
    return { ...this.base(key, event, "messages"), kind: "reasoning", text: "" };
  }

  private reasoning(key: string, event: RunEvent, data: Fields): ReasoningRow {
    const row = this.group(key, () => this.newReasoning(key, event));
    return this.join(row, event, (r) => {
      const type = event.type;
      if (type === Agui.REASONING_MESSAGE_CONTENT || type === Agui.REASONING_MESSAGE_CHUNK)
        r.text += text(data.delta) ?? "";
      if (type === Agui.REASONING_MESSAGE_START || type === Agui.REASONING_START) r.complete = false;
      if (REASONING_ENDS.has(type)) r.complete = true;
    });
  }

  private think(event: RunEvent, data: Fields): ReasoningRow {
    if (!this.thinking || event.type === Agui.THINKING_START) {
      this.thinking = this.newReasoning(`think:${event.seq}`, event);
      this.rows.push(this.thinking);
    }
    const row = this.join(this.thinking, event, (r) => {
      if (event.type === Agui.THINKING_TEXT_MESSAGE_CONTENT) r.text += text(data.delta) ?? "";
      if (event.type === Agui.THINKING_END) r.complete = true;
    });
    if (event.type === Agui.THINKING_END) this.thinking = null;
    return row;
  }

  private tool(event: RunEvent, data: Fields): ToolRow {
    const id = String(data.toolCallId);
    const key = `tool:${id}`;
    const row = this.group<ToolRow>(key, () => {
      const created: ToolRow = {
        ...this.base(key, event, "tools"),
        kind: "tool",
        toolCallId: id,
        name: null,
        args: "",
        result: null,
        approval: null,
      };
      this.tools.set(id, created);
      return created;
    });
    const type = event.type;
    this.join(row, event, (r) => {
      const name = text(data.toolCallName) ?? text(data.name);
      if (name && type !== Agui.TOOL_CALL_RESULT) r.name = name;
      if (type === Agui.TOOL_CALL_ARGS || type === Agui.TOOL_CALL_CHUNK) r.args += text(data.delta) ?? "";
      if (type === Agui.TOOL_CALL_END || type === Agui.TOOL_CALL_CHUNK) r.complete = true;
      if (type === Agui.TOOL_CALL_RESULT) {
        r.result = (r.result ?? "") + inline(data.content ?? data.result ?? null);
        r.complete = true;
      }
    });
    if (type === Agui.TOOL_CALL_RESULT) this.activeTool = null;
    else if (type !== Agui.TOOL_CALL_END) this.activeTool = row;
    const asked = this.approvalRows.get(id);
    if (asked) this.link(asked, row);
    return row;
  }

  /** An approval request is a row of its own; one naming a tool call is linked to its row. */
  private approvalRequested(event: RunEvent, data: Fields): EventRow {
    const row = this.single(event, "control", "approvals");
    const requestId = text(data.requestId);
    if (requestId !== null) this.pendingApprovals.add(requestId);
    const toolCallId = text(data.toolCallId);
    if (!toolCallId || !requestId) return row;
    this.approvalRows.set(toolCallId, row);
    const tool = this.tools.get(toolCallId);
    if (tool) this.link(row, tool);
    return row;
  }

  /** Links a request and its tool row both ways; called again as the tool row fills in. */
  private link(request: EventRow, tool: ToolRow): void {
    const requestId = String(fields(request.event.data).requestId);
    const about = { seq: tool.firstSeq, name: tool.name, headline: toolHeadline(tool.args) };
    if (request.tool?.name !== about.name || request.tool.headline !== about.headline) {
      request.tool = about;
      request.version++;
    }
    if (tool.approval?.requestId !== requestId) {
      tool.approval = { requestId, seq: request.firstSeq, state: "pending" };
      tool.version++;
      this.toolOfRequest.set(requestId, tool);
    }
  }

  private approvalSettled(type: string, data: Fields): void {
    const requestId = text(data.requestId) ?? "?";
    this.pendingApprovals.delete(requestId);
    const tool = this.toolOfRequest.get(requestId);
    if (!tool?.approval) return;
    tool.approval.state =
      type === Control.APPROVAL_EXPIRED ? "expired" : data.decision === "approve" ? "approved" : "denied";
    tool.version++;
  }

  private endTurn(): void {
    this.inTurn = false;
    this.activeTool = null;
    for (const row of this.open) {
      row.stopped = true;
      row.version++;
    }
    this.open.clear();
  }
}

const LIFECYCLE: ReadonlySet<string> = new Set([
  Agui.RUN_STARTED,
  Agui.RUN_FINISHED,
  Agui.STEP_STARTED,
  Agui.STEP_FINISHED,
]);
/** Events after which nothing of the turn streams any more. */
export const TURN_ENDS: ReadonlySet<string> = new Set([Agui.RUN_FINISHED, Agui.RUN_ERROR, Control.RUN_FINISHED]);
const REASONING_ENDS: ReadonlySet<string> = new Set([
  Agui.REASONING_MESSAGE_END,
  Agui.REASONING_END,
  Agui.REASONING_MESSAGE_CHUNK,
]);

/** The control events about an approval (its request is the agent's, `approval.requested`). */
const APPROVAL_SETTLED: ReadonlySet<string> = new Set([Control.APPROVAL_RESOLVED, Control.APPROVAL_EXPIRED]);

function controlCategory(event: RunEvent): Category {
  const data = fields(event.data);
  if (APPROVAL_SETTLED.has(event.type)) return "approvals";
  if (event.type === Control.COMMAND_QUEUED && data.type === "approval") return "approvals";
  if (event.type === Control.RUN_FINISHED) {
    const status = fields(data.outcome).status;
    if (status === "failed" || status === "timed_out") return "errors";
  }
  if (event.type === Control.COMMAND_ACKED && data.state === "rejected") return "errors";
  return "control";
}
