import { AgentEventType, AguiEventType, ControlEventType, type RunEvent } from "../../../src/protocol/index.ts";
import { type Fields, fields } from "../fields.ts";
import { statusLabel } from "../status.tsx";

/** One-line summaries of control, lifecycle and session events for the timeline rows. */
export interface Summary {
  title: string;
  detail?: string;
  tone: "neutral" | "good" | "bad" | "warn";
}

const str = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined;

function clip(value: string, max = 160): string {
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

function summaryOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return clip(typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
}

function withDetail(title: string, tone: Summary["tone"], detail: string | undefined): Summary {
  return detail ? { title, tone, detail } : { title, tone };
}

function commandTitle(data: Fields): string {
  const type = str(data.type) ?? "command";
  if (type === "approval") return `${data.decision === "approve" ? "Approval" : "Denial"} sent to the runner`;
  return `${type[0]?.toUpperCase() ?? ""}${type.slice(1)} command queued`;
}

/** What the transcript knows besides the event: for a claim, the runner it took over from. */
export interface Context {
  replaced?: string | undefined;
}

export function describe(event: RunEvent, context: Context = {}): Summary {
  const data = fields(event.data);
  switch (event.type) {
    case ControlEventType.RUN_CREATED: {
      const agent = typeof data.agent === "string" ? data.agent : str(fields(data.agent).name);
      const prompt = str(fields(data.input).prompt);
      return withDetail(`Run created${agent ? ` for ${agent}` : ""}`, "neutral", prompt && clip(prompt));
    }
    case ControlEventType.RUN_CLAIMED: {
      const unknown = Number(data.unknownCommands ?? 0);
      const previous = Number(data.previousEpoch ?? 0);
      const takeover =
        previous > 0 ? `took over from ${context.replaced ?? "the runner"} (epoch ${previous})` : undefined;
      const note = unknown > 0 ? `${unknown} command${unknown === 1 ? "" : "s"} now unknown` : undefined;
      return withDetail(
        `Claimed by ${str(data.runnerId) ?? "a runner"} · epoch ${str(data.epoch) ?? "?"}`,
        "neutral",
        [takeover, note].filter(Boolean).join(" · ") || undefined,
      );
    }
    case ControlEventType.RUN_STALLED:
      return withDetail(`Runner stalled · epoch ${str(data.epoch) ?? "?"}`, "warn", str(data.reason));
    case ControlEventType.RUN_RESUMED:
      return { title: `Runner resumed · epoch ${str(data.epoch) ?? "?"}`, tone: "good" };
    case ControlEventType.RUN_RECOVERING:
      return withDetail(`Recovering · ${str(data.mode) ?? "?"}`, "warn", str(data.reason));
    case ControlEventType.RUN_RECOVERY_AUTOMATIC:
      return withDetail(
        `Automatic recovery ${str(data.attempt) ?? "?"} of ${str(data.maxRecoveries) ?? "?"} · ${str(data.mode) ?? "?"}`,
        "warn",
        str(data.reason) ?? "no operator needed: the pool assigns the next start to a host",
      );
    case ControlEventType.RUN_RECOVERY_DECIDED:
      return withDetail(`Recovery decided · ${str(data.action) ?? "?"}`, "neutral", str(data.commandId));
    case ControlEventType.RUN_GENERATION_STARTED: {
      const session = fields(data.nativeSession);
      const from = session.id ? `resumes ${str(session.provider) ?? ""} ${str(session.id)}`.trim() : "starts over";
      return withDetail(`Generation ${str(data.generation) ?? "?"} · ${str(data.mode) ?? ""}`, "good", from);
    }
    case ControlEventType.RUN_CHECKPOINT:
      return withDetail(
        `Checkpoint · generation ${str(data.generation) ?? "?"} up to #${str(data.sourceSeq) ?? "?"}`,
        "neutral",
        [str(data.bytes) && `${str(data.bytes)} bytes`, str(data.digest)].filter(Boolean).join(" · ") || undefined,
      );
    case ControlEventType.RUN_FINISHED: {
      const outcome = fields(data.outcome);
      const status = str(outcome.status) ?? "finished";
      const error = fields(outcome.error);
      const detail = error.code ? `${str(error.code)}: ${str(error.message) ?? ""}` : undefined;
      const tone = status === "succeeded" ? "good" : status === "cancelled" ? "neutral" : "bad";
      return withDetail(`Run finished · ${statusLabel(status)}`, tone, detail && clip(detail, 400));
    }
    case ControlEventType.COMMAND_QUEUED: {
      const detail =
        str(data.text) ?? str(data.reason) ?? (data.requestId ? `request ${str(data.requestId)}` : undefined);
      return withDetail(commandTitle(data), "neutral", detail && clip(detail));
    }
    case ControlEventType.COMMAND_ACKED: {
      const state = str(data.state) ?? "acked";
      const tone = state === "rejected" ? "bad" : state === "applied" ? "good" : "neutral";
      const commandId = str(data.commandId) ?? "";
      // An approval decision travels as a command the object names `~approval:<requestId>`: say so.
      const approval = /^~approval:(.+)$/.exec(commandId)?.[1];
      if (approval) return { title: `Decision on ${approval} ${state} by the runner`, tone };
      // A cancel sent with no commandId of its own is `~cancel`.
      if (commandId === "~cancel") return { title: `Cancel ${state} by the runner`, tone };
      return withDetail(`Command ${state}`, tone, commandId.startsWith("~") ? undefined : commandId || undefined);
    }
    case AgentEventType.APPROVAL_REQUESTED: {
      const what = [data.tool ?? data.toolName, data.command ?? data.input ?? data.action]
        .map((part) => (part === undefined || part === null ? undefined : summaryOf(part)))
        .filter((part) => part !== undefined)
        .join(" ");
      const reason = str(data.reason);
      return withDetail(
        `Approval requested · ${str(data.requestId) ?? "?"}`,
        "warn",
        clip([what, reason && `(${reason})`].filter(Boolean).join(" ")) || undefined,
      );
    }
    case ControlEventType.APPROVAL_RESOLVED:
      return withDetail(
        `Approval ${data.decision === "approve" ? "approved" : "denied"} · ${str(data.requestId) ?? "?"}`,
        data.decision === "approve" ? "good" : "bad",
        str(data.reason),
      );
    case ControlEventType.APPROVAL_EXPIRED:
      return withDetail(`Approval expired, denied · ${str(data.requestId) ?? "?"}`, "warn", str(data.reason));
    case AguiEventType.RUN_STARTED:
      return withDetail("Turn started", "neutral", str(data.runId) ?? str(data.threadId));
    case AguiEventType.RUN_FINISHED: {
      const outcome = str(fields(data.outcome).type) ?? "success";
      const title =
        outcome === "success" ? "Turn finished" : `Turn ${outcome === "cancelled" ? "cancelled" : "interrupted"}`;
      return withDetail(title, outcome === "success" ? "good" : "warn", summaryOf(data.result));
    }
    case AgentEventType.AGENT_SESSION:
      return withDetail(`Session ${str(data.provider) ?? "?"}`, "neutral", str(data.id));
    case AguiEventType.STEP_STARTED:
      return { title: `Step started · ${str(data.stepName) ?? "?"}`, tone: "neutral" };
    case AguiEventType.STEP_FINISHED:
      return { title: `Step finished · ${str(data.stepName) ?? "?"}`, tone: "neutral" };
    case AguiEventType.RUN_ERROR:
      return withDetail(str(data.message) ?? "The agent reported an error", "bad", str(data.code));
    default:
      return { title: event.type, tone: "neutral" };
  }
}
