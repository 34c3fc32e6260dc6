import type { RunEvent } from "../../../src/protocol/index.ts";
import { type Fields, fields } from "../fields.ts";

/**
 * The transcript as rows: AG-UI text deltas joined into one message per messageId, tool calls
 * into one card per toolCallId, everything else one row per event. A row sits at its first
 * event; later events of the same message or tool call update it in place.
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
  /** Bumped whenever an event joins the row, so views re-render only what changed. */
  version: number;
  category: Category;
}
export interface MessageRow extends RowBase {
  kind: "message";
  role: string;
  text: string;
  complete: boolean;
}
export interface ReasoningRow extends RowBase {
  kind: "reasoning";
  text: string;
  complete: boolean;
}
export interface ToolRow extends RowBase {
  kind: "tool";
  toolCallId: string;
  name: string;
  args: string;
  result: string | null;
  complete: boolean;
}
export interface EventRow extends RowBase {
  kind: "error" | "control" | "lifecycle" | "raw";
  event: RunEvent;
}
export type Row = MessageRow | ReasoningRow | ToolRow | EventRow;

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);
const shown = (value: unknown): string => (typeof value === "string" ? value : (JSON.stringify(value) ?? ""));

const LIFECYCLE = new Set(["RUN_STARTED", "RUN_FINISHED", "STEP_STARTED", "STEP_FINISHED"]);
export const CONTROL_TYPES = new Set([
  "run.created",
  "run.claimed",
  "run.stalled",
  "run.resumed",
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

export class Transcript {
  readonly rows: Row[] = [];
  private readonly groups = new Map<string, Row>();
  private readonly bySeq = new Map<number, Row>();
  /** The open run of id-less text deltas (ndjson output lines), joined while nothing interrupts them. */
  private plainText: MessageRow | null = null;
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
    if (CONTROL_TYPES.has(type)) return this.single(event, "control", controlCategory(event));
    return this.single(event, "raw", "other");
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

  private message(key: string, event: RunEvent, data: Fields): MessageRow {
    const row = this.group<MessageRow>(key, () => ({
      kind: "message",
      key,
      firstSeq: event.seq,
      events: [],
      version: 0,
      category: "messages",
      role: "assistant",
      text: "",
      complete: false,
    }));
    return this.join(row, event, (r) => {
      const role = text(data.role);
      if (role) r.role = role;
      if (key.startsWith("plain:") && !role) r.role = "output";
      if (event.type === "TEXT_MESSAGE_CONTENT" || event.type === "TEXT_MESSAGE_CHUNK")
        r.text += text(data.delta) ?? "";
      if (event.type === "TEXT_MESSAGE_END") r.complete = true;
    });
  }

  private newReasoning(key: string, event: RunEvent): ReasoningRow {
    return {
      kind: "reasoning",
      key,
      firstSeq: event.seq,
      events: [],
      version: 0,
      category: "messages",
      text: "",
      complete: false,
    };
  }

  private reasoning(key: string, event: RunEvent, data: Fields): ReasoningRow {
    const row = this.group(key, () => this.newReasoning(key, event));
    return this.join(row, event, (r) => {
      if (event.type.endsWith("_CONTENT") || event.type.endsWith("_CHUNK")) r.text += text(data.delta) ?? "";
      if (event.type === "REASONING_END") r.complete = true;
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
      kind: "tool",
      key,
      firstSeq: event.seq,
      events: [],
      version: 0,
      category: "tools",
      toolCallId: id,
      name: "tool",
      args: "",
      result: null,
      complete: false,
    }));
    return this.join(row, event, (r) => {
      const name = text(data.toolCallName) ?? text(data.name);
      if (name) r.name = name;
      if (event.type === "TOOL_CALL_ARGS" || event.type === "TOOL_CALL_CHUNK") r.args += text(data.delta) ?? "";
      if (event.type === "TOOL_CALL_END") r.complete = true;
      if (event.type === "TOOL_CALL_RESULT") {
        r.result = (r.result ?? "") + shown(data.content ?? data.result ?? null);
        r.complete = true;
      }
    });
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
      body = row.text;
      break;
    case "tool":
      body = `${row.name} ${row.toolCallId} ${row.args} ${row.result ?? ""}`;
      break;
    default:
      body = `${row.event.type} ${JSON.stringify(row.event.data) ?? ""}`;
  }
  const value = `${body} ${row.events[0]?.type ?? ""}`.toLowerCase();
  searchCache.set(row, { version: row.version, text: value });
  return value;
}

export function rowMatches(row: Row, categories: ReadonlySet<Category>, query: string): boolean {
  if (!categories.has(row.category)) return false;
  return query === "" || searchText(row).includes(query);
}
