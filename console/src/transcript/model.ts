import type { RunEvent } from "../../../src/protocol/index.ts";
import { type Fields, fields } from "../fields.ts";
import { inline, nativeLabel, nativeOf, toolHeadline } from "./native.ts";

/**
 * The transcript as rows, the way an AG-UI client assembles a conversation: text and reasoning
 * joined into one row per messageId, whether they stream (START / CONTENT / END) or arrive whole
 * (the `*_CHUNK` shorthands); a tool call (START / ARGS / END or TOOL_CALL_CHUNK, then RESULT) as
 * one card per toolCallId, linked both ways to the approval that names it; everything else one
 * row per event. A row sits at its first event; later events of the same message or tool call
 * update it in place.
 */
export type Category = "messages" | "tools" | "errors" | "approvals" | "control" | "other";

export const CATEGORIES: readonly { id: Category; label: string }[] = [
  { id: "messages", label: "Messages" },
  { id: "tools", label: "Tools" },
  { id: "errors", label: "Errors" },
  { id: "approvals", label: "Approvals" },
  { id: "control", label: "Control" },
  { id: "other", label: "Other" },
];

interface RowBase {
  key: string;
  firstSeq: number;
  events: RunEvent[];
  /** Bumped whenever the row changes, so views re-render only what changed. */
  version: number;
  category: Category;
}
interface Streamed {
  complete: boolean;
  /** The turn (or the run) ended before this finished streaming. */
  stopped: boolean;
}
export interface MessageRow extends RowBase, Streamed {
  kind: "message";
  role: string;
  text: string;
}
export interface ReasoningRow extends RowBase, Streamed {
  kind: "reasoning";
  text: string;
}
export interface ApprovalLink {
  requestId: string;
  seq: number;
  state: "pending" | "approved" | "denied" | "expired";
}
export interface ToolRow extends RowBase, Streamed {
  kind: "tool";
  toolCallId: string;
  name: string;
  args: string;
  result: string | null;
  approval: ApprovalLink | null;
}
export interface EventRow extends RowBase {
  kind: "error" | "control" | "lifecycle" | "session" | "raw";
  event: RunEvent;
  /** For an approval request: the tool call it is about. */
  tool?: { seq: number; name: string; headline: string };
  /** For a claim that took over: the runner that held the epoch before (when that claim is loaded). */
  replaced?: string;
}
export type Row = MessageRow | ReasoningRow | ToolRow | EventRow;

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);

const LIFECYCLE = new Set(["RUN_STARTED", "RUN_FINISHED", "STEP_STARTED", "STEP_FINISHED"]);
/** Events after which nothing of the turn streams any more. */
const TURN_ENDS = new Set(["RUN_FINISHED", "RUN_ERROR", "run.finished"]);
export const CONTROL_TYPES = new Set([
  "run.created",
  "run.claimed",
  "run.stalled",
  "run.resumed",
  "run.recovering",
  "run.recovery.decided",
  "run.recovery.automatic",
  "run.generation.started",
  "run.checkpoint",
  "run.finished",
  "command.queued",
  "command.acked",
  "approval.requested",
  "approval.resolved",
  "approval.expired",
]);

function controlCategory(event: RunEvent): Category {
  if (event.type.startsWith("approval.")) return "approvals";
  if (event.type === "command.queued" && fields(event.data).type === "approval") return "approvals";
  if (event.type === "run.finished") {
    const status = fields(fields(event.data).outcome).status;
    if (status === "failed" || status === "timed_out") return "errors";
  }
  if (event.type === "command.acked" && fields(event.data).state === "rejected") return "errors";
  return "control";
}

const streamed = { complete: false, stopped: false };

export class Transcript {
  readonly rows: Row[] = [];
  private readonly groups = new Map<string, Row>();
  private readonly bySeq = new Map<number, Row>();
  /** Rows still streaming, marked stopped when their turn ends first. */
  private readonly open = new Set<MessageRow | ReasoningRow | ToolRow>();
  /** Approval requests by the tool call they name, and tool cards by the request about them. */
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

  add(event: RunEvent): void {
    const row = this.place(event);
    if (row !== this.plainText) this.plainText = null;
    this.bySeq.set(event.seq, row);
    if (TURN_ENDS.has(event.type)) this.endTurn();
  }

  private place(event: RunEvent): Row {
    const data = fields(event.data);
    const type = event.type;
    if (type.startsWith("TEXT_MESSAGE_")) {
      const id = text(data.messageId);
      if (id) return this.message(`msg:${id}`, event, data);
      if ((type === "TEXT_MESSAGE_CONTENT" || type === "TEXT_MESSAGE_CHUNK") && this.plainText) {
        return this.join(this.plainText, event, (row) => {
          row.text += text(data.delta) ?? "";
        });
      }
      if (type === "TEXT_MESSAGE_CONTENT" || type === "TEXT_MESSAGE_CHUNK") {
        const row = this.message(`plain:${event.seq}`, event, data);
        this.plainText = row;
        return row;
      }
    }
    if (type.startsWith("REASONING_") && text(data.messageId))
      return this.reasoning(`why:${data.messageId}`, event, data);
    if (type.startsWith("THINKING_")) return this.think(event, data);
    if (type.startsWith("TOOL_CALL_") && text(data.toolCallId)) return this.tool(event, data);
    if (type === "RUN_ERROR") return this.single(event, "error", "errors");
    if (LIFECYCLE.has(type)) return this.single(event, "lifecycle", "control");
    if (type === "agent.session") return this.single(event, "session", "control");
    if (type === "approval.requested") return this.approvalRequested(event, data);
    if (type === "approval.resolved" || type === "approval.expired") this.approvalSettled(type, data);
    if (type === "run.claimed") return this.claimed(event, data);
    if (CONTROL_TYPES.has(type)) return this.single(event, "control", controlCategory(event));
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

  private base(key: string, event: RunEvent, category: Category): RowBase {
    return { key, firstSeq: event.seq, events: [], version: 0, category };
  }

  private message(key: string, event: RunEvent, data: Fields): MessageRow {
    const create = (): MessageRow => ({
      ...this.base(key, event, "messages"),
      ...streamed,
      kind: "message",
      role: "assistant",
      text: "",
    });
    return this.join(this.group(key, create), event, (r) => {
      const role = text(data.role);
      if (role) r.role = role;
      // Text without an id is an agent's plain output, each piece whole.
      if (key.startsWith("plain:")) r.complete = true;
      if (key.startsWith("plain:") && !role) r.role = "output";
      if (event.type === "TEXT_MESSAGE_CONTENT" || event.type === "TEXT_MESSAGE_CHUNK")
        r.text += text(data.delta) ?? "";
      // A chunk is a whole message (or a whole piece of one): nothing is left streaming.
      if (event.type === "TEXT_MESSAGE_END" || event.type === "TEXT_MESSAGE_CHUNK") r.complete = true;
    });
  }

  private newReasoning(key: string, event: RunEvent): ReasoningRow {
    return { ...this.base(key, event, "messages"), ...streamed, kind: "reasoning", text: "" };
  }

  private reasoning(key: string, event: RunEvent, data: Fields): ReasoningRow {
    const row = this.group(key, () => this.newReasoning(key, event));
    return this.join(row, event, (r) => {
      const type = event.type;
      if (type === "REASONING_MESSAGE_CONTENT" || type === "REASONING_MESSAGE_CHUNK") r.text += text(data.delta) ?? "";
      if (type === "REASONING_MESSAGE_START" || type === "REASONING_START") r.complete = false;
      if (type === "REASONING_MESSAGE_END" || type === "REASONING_END" || type === "REASONING_MESSAGE_CHUNK")
        r.complete = true;
    });
  }

  private think(event: RunEvent, data: Fields): ReasoningRow {
    if (!this.thinking || event.type === "THINKING_START") {
      this.thinking = this.newReasoning(`think:${event.seq}`, event);
      this.rows.push(this.thinking);
    }
    const row = this.join(this.thinking, event, (r) => {
      if (event.type === "THINKING_TEXT_MESSAGE_CONTENT") r.text += text(data.delta) ?? "";
      if (event.type === "THINKING_END") r.complete = true;
    });
    if (event.type === "THINKING_END") this.thinking = null;
    return row;
  }

  private tool(event: RunEvent, data: Fields): ToolRow {
    const id = String(data.toolCallId);
    const key = `tool:${id}`;
    const row = this.group<ToolRow>(key, () => ({
      ...this.base(key, event, "tools"),
      ...streamed,
      kind: "tool",
      toolCallId: id,
      name: "tool",
      args: "",
      result: null,
      approval: null,
    }));
    this.join(row, event, (r) => {
      const name = text(data.toolCallName) ?? text(data.name);
      if (name && event.type !== "TOOL_CALL_RESULT") r.name = name;
      if (event.type === "TOOL_CALL_ARGS" || event.type === "TOOL_CALL_CHUNK") r.args += text(data.delta) ?? "";
      if (event.type === "TOOL_CALL_END" || event.type === "TOOL_CALL_CHUNK") r.complete = true;
      if (event.type === "TOOL_CALL_RESULT") {
        r.result = (r.result ?? "") + inline(data.content ?? data.result ?? null);
        r.complete = true;
      }
    });
    const asked = this.approvalRows.get(id);
    if (asked) this.link(asked, row);
    return row;
  }

  /** An approval request is a row of its own; one naming a tool call is linked to its card. */
  private approvalRequested(event: RunEvent, data: Fields): EventRow {
    const row = this.single(event, "control", "approvals");
    const toolCallId = text(data.toolCallId);
    const requestId = text(data.requestId);
    if (!toolCallId || !requestId) return row;
    this.approvalRows.set(toolCallId, row);
    const tool = this.groups.get(`tool:${toolCallId}`);
    if (tool?.kind === "tool") this.link(row, tool);
    return row;
  }

  /** Links a request and its tool card both ways; called again as the card fills in. */
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
    const tool = this.toolOfRequest.get(String(data.requestId));
    if (!tool?.approval) return;
    tool.approval.state = type === "approval.expired" ? "expired" : data.decision === "approve" ? "approved" : "denied";
    tool.version++;
  }

  private endTurn(): void {
    for (const row of this.open) {
      row.stopped = true;
      row.version++;
    }
    this.open.clear();
  }
}

const searchCache = new WeakMap<Row, { version: number; text: string }>();

/** Lower-cased text a search matches against: what the row shows, plus its event types. */
export function searchText(row: Row): string {
  const cached = searchCache.get(row);
  if (cached && cached.version === row.version) return cached.text;
  let body: string;
  switch (row.kind) {
    case "message":
      body = `${row.role} ${row.text}`;
      break;
    case "reasoning":
      body = `reasoning ${row.text}`;
      break;
    case "tool":
      body = `${row.name} ${row.toolCallId} ${row.args} ${row.result ?? ""} ${row.approval?.requestId ?? ""}`;
      break;
    case "raw":
      body = `${row.event.type} ${nativeLabel(nativeOf(row.event))} ${inline(row.event.data)}`;
      break;
    default:
      body = `${row.event.type} ${inline(row.event.data)}`;
  }
  const value = `${body} ${row.events[0]?.type ?? ""}`.toLowerCase();
  searchCache.set(row, { version: row.version, text: value });
  return value;
}

export function rowMatches(row: Row, categories: ReadonlySet<Category>, query: string): boolean {
  if (!categories.has(row.category)) return false;
  return query === "" || searchText(row).includes(query);
}
