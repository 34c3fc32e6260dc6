import type { RunEvent } from "../../../src/protocol/index.ts";

/** What a row is about, for filtering a transcript. */
export type Category = "messages" | "tools" | "errors" | "approvals" | "control" | "other";

export const CATEGORY_IDS: readonly Category[] = ["messages", "tools", "errors", "approvals", "control", "other"];

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
  /** The sender's role; "output" for an agent's plain (id-less) output lines. */
  role: string;
  /** Whether the text came with a messageId (id-less text is the agent's plain output). */
  identified: boolean;
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
  /** null until an event names the tool. */
  name: string | null;
  args: string;
  result: string | null;
  approval: ApprovalLink | null;
}
export interface EventRow extends RowBase {
  kind: "error" | "control" | "lifecycle" | "session" | "raw";
  event: RunEvent;
  /** For an approval request: the tool call it is about. */
  tool?: { seq: number; name: string | null; headline: string };
  /** For a claim that took over: the runner that held the epoch before (when that claim is loaded). */
  replaced?: string;
}
export type Row = MessageRow | ReasoningRow | ToolRow | EventRow;
export type StreamedRow = MessageRow | ReasoningRow | ToolRow;

/** The agent's own session identity, as its last `agent.session` event gave it. */
export interface AgentSession {
  provider: string | null;
  id: string | null;
}
