import { prettyJson } from "../format.ts";
import { JumpLink } from "./jump.tsx";
import type { ApprovalLink, MessageRow, ReasoningRow, ToolRow } from "./model.ts";
import { clip, resultPreview, toolHeadline } from "./native.ts";

/** The bodies of the rows that gather several events: a message, a reasoning block, a tool call. */

function progress(row: MessageRow | ReasoningRow): string {
  if (row.complete) return "";
  return row.stopped ? " · cut off" : " · streaming";
}

export function MessageBody({ row }: { row: MessageRow }) {
  return (
    <div class={`message role-${row.role.replaceAll(/[^a-z0-9_-]/gi, "")}`}>
      <div class="message-role">
        {row.role}
        {row.role !== "output" && progress(row) && <span class="streaming">{progress(row)}</span>}
      </div>
      <div class="message-text">{row.text || <em class="muted">(empty)</em>}</div>
    </div>
  );
}

/** Reasoning stays open while it streams and folds to one dimmed line once it is done. */
export function ReasoningBody({ row }: { row: ReasoningRow }) {
  const live = !row.complete && !row.stopped;
  return (
    <details class="reasoning" open={live}>
      <summary>
        <span class="reasoning-label">Reasoning{progress(row)}</span>
        <span class="reasoning-preview">{clip(row.text.replaceAll(/\s+/g, " ").trim(), 140)}</span>
      </summary>
      <div class="message-text">{row.text || <em class="muted">(no text)</em>}</div>
    </details>
  );
}

function formatArgs(args: string): string {
  if (args.trim() === "") return "(none)";
  try {
    return prettyJson(JSON.parse(args));
  } catch {
    return args;
  }
}

type ToolState = "streaming" | "approval" | "running" | "done" | "denied" | "stopped";

const STATE_LABEL: Record<ToolState, string> = {
  streaming: "streaming arguments",
  approval: "awaiting approval",
  running: "running",
  done: "result",
  denied: "denied",
  stopped: "no result",
};

function toolState(row: ToolRow): ToolState {
  if (row.result !== null) return "done";
  const decided = row.approval?.state;
  if (decided === "denied" || decided === "expired") return "denied";
  if (row.stopped) return "stopped";
  if (!row.complete) return "streaming";
  return decided === "pending" ? "approval" : "running";
}

function ApprovalNote({ approval }: { approval: ApprovalLink }) {
  return (
    <span class={`tool-approval approval-${approval.state}`}>
      Approval{" "}
      <JumpLink seq={approval.seq} label={`Approval request ${approval.requestId}, event ${approval.seq}`}>
        {approval.requestId}
      </JumpLink>{" "}
      · {approval.state}
    </span>
  );
}

/** A tool call as one card: name, what it runs, its state; arguments and result inside. */
export function ToolBody({ row }: { row: ToolRow }) {
  const state = toolState(row);
  const headline = toolHeadline(row.args);
  return (
    <div class={`tool-card state-${state}`}>
      <details class="tool">
        <summary>
          <span class="tool-name">{row.name ?? "tool"}</span>
          {headline && <code class="tool-headline">{headline}</code>}
          <span class="tool-state">{STATE_LABEL[state]}</span>
        </summary>
        <div class="tool-body">
          <h4>Arguments</h4>
          <pre class="json">{formatArgs(row.args)}</pre>
          <h4>Result</h4>
          <pre class="json tool-result">{row.result === null ? "(none yet)" : formatArgs(row.result)}</pre>
          <p class="tool-id">
            tool call <code>{row.toolCallId}</code>
          </p>
        </div>
      </details>
      {(row.approval || row.result !== null) && (
        <div class="tool-foot">
          {row.approval && <ApprovalNote approval={row.approval} />}
          {row.result !== null && <span class="tool-preview">↳ {resultPreview(row.result) || "(empty)"}</span>}
        </div>
      )}
    </div>
  );
}
