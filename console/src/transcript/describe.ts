import type { RunEvent } from "../../../src/protocol/index.ts";
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
    case "run.created": {
      const agent = typeof data.agent === "string" ? data.agent : str(fields(data.agent).name);
      const prompt = str(fields(data.input).prompt);
      return withDetail(`Run created${agent ? ` for ${agent}` : ""}`, "neutral", prompt && clip(prompt));
    }
    case "run.claimed": {
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
    case "run.stalled":
      return withDetail(`Runner stalled · epoch ${str(data.epoch) ?? "?"}`, "warn", str(data.reason));
    case "run.resumed":
      return { title: `Runner resumed · epoch ${str(data.epoch) ?? "?"}`, tone: "good" };
    case "run.recovering":
      return withDetail(`Recovering · ${str(data.mode) ?? "?"}`, "warn", str(data.reason));
    case "run.recovery.automatic":
      return withDetail(
        `Automatic recovery ${str(data.attempt) ?? "?"} of ${str(data.maxRecoveries) ?? "?"} · ${str(data.mode) ?? "?"}`,
        "warn",
        str(data.reason) ?? "no operator needed: the pool assigns the next start to a host",
      );
    case "run.recovery.decided":
      return withDetail(`Recovery decided · ${str(data.action) ?? "?"}`, "neutral", str(data.commandId));
    case "run.generation.started": {
      const session = fields(data.nativeSession);
      const from = session.id ? `resumes ${str(session.provider) ?? ""} ${str(session.id)}`.trim() : "starts over";
      return withDetail(`Generation ${str(data.generation) ?? "?"} · ${str(data.mode) ?? ""}`, "good", from);
    }
    case "run.checkpoint":
      return withDetail(
        `Checkpoint · generation ${str(data.generation) ?? "?"} up to #${str(data.sourceSeq) ?? "?"}`,
        "neutral",
        [str(data.bytes) && `${str(data.bytes)} bytes`, str(data.digest)].filter(Boolean).join(" · ") || undefined,
      );
    case "run.finished": {
      const outcome = fields(data.outcome);
      const status = str(outcome.status) ?? "finished";
      const error = fields(outcome.error);
      const detail = error.code ? `${str(error.code)}: ${str(error.message) ?? ""}` : undefined;
      const tone = status === "succeeded" ? "good" : status === "cancelled" ? "neutral" : "bad";
      return withDetail(`Run finished · ${statusLabel(status)}`, tone, detail && clip(detail, 400));
    }
    case "command.queued": {
      const detail =
        str(data.text) ?? str(data.reason) ?? (data.requestId ? `request ${str(data.requestId)}` : undefined);
      return withDetail(commandTitle(data), "neutral", detail && clip(detail));
    }
    case "command.acked": {
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
    case "approval.requested": {
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
    case "approval.resolved":
      return withDetail(
        `Approval ${data.decision === "approve" ? "approved" : "denied"} · ${str(data.requestId) ?? "?"}`,
        data.decision === "approve" ? "good" : "bad",
        str(data.reason),
      );
    case "approval.expired":
      return withDetail(`Approval expired, denied · ${str(data.requestId) ?? "?"}`, "warn", str(data.reason));
    case "RUN_STARTED":
      return withDetail("Turn started", "neutral", str(data.runId) ?? str(data.threadId));
    case "RUN_FINISHED": {
      const outcome = str(fields(data.outcome).type) ?? "success";
      const title =
        outcome === "success" ? "Turn finished" : `Turn ${outcome === "cancelled" ? "cancelled" : "interrupted"}`;
      return withDetail(title, outcome === "success" ? "good" : "warn", summaryOf(data.result));
    }
    case "agent.session":
      return withDetail(`Session ${str(data.provider) ?? "?"}`, "neutral", str(data.id));
    case "STEP_STARTED":
      return { title: `Step started · ${str(data.stepName) ?? "?"}`, tone: "neutral" };
    case "STEP_FINISHED":
      return { title: `Step finished · ${str(data.stepName) ?? "?"}`, tone: "neutral" };
    case "RUN_ERROR":
      return withDetail(str(data.message) ?? "The agent reported an error", "bad", str(data.code));
    default:
      return { title: event.type, tone: "neutral" };
  }
}
