/** Commands that act on a live run: send, interrupt, cancel, approve, deny. */
import { randomUUID } from "node:crypto";
import {
  type ApprovalRecord,
  ApprovalBody,
  CancelBody,
  CommandBody,
  type CommandRecord,
  isTerminal,
  type RunRecord,
} from "../../src/protocol/index.ts";
import { EXIT, type ExitCode, invalidUsage, stringValue } from "./args.ts";
import { CliError, runPath } from "./client.ts";
import type { Context } from "./context.ts";

/** The command id: --command-id when retrying, otherwise a fresh one. */
export function commandId(ctx: Context): string {
  return stringValue(ctx.values, "command-id") ?? `cli-${randomUUID()}`;
}

/** A failed send may or may not have reached the server: say how to retry without doing it twice. */
export async function retrySafely<T>(id: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof CliError && !err.isVerdict) {
      throw new CliError(err.code, `${err.message}; retry safely with --command-id ${id}`, err.status);
    }
    throw err;
  }
}

export async function sendCommand(ctx: Context): Promise<ExitCode> {
  const runId = ctx.args[0] as string;
  const id = commandId(ctx);
  const raw: Record<string, unknown> =
    ctx.command === "send" ? { commandId: id, type: "input", text: ctx.args[1] } : { commandId: id, type: "interrupt" };
  const parsed = CommandBody.safeParse(raw);
  if (!parsed.success) throw invalidUsage(parsed.error, ctx.command);
  const { body } = await retrySafely(id, () =>
    ctx.api.call<{ created: boolean; command: CommandRecord | null }>("POST", runPath(runId, "/commands"), parsed.data),
  );
  if (ctx.values.json) {
    ctx.json(body);
    return EXIT.ok;
  }
  const what = ctx.command === "send" ? "input" : "interrupt";
  // `command` is null only when the server kept no command for this request (see CommandAccepted).
  const state = body.command ? ` · ${body.command.state}` : "";
  const kept = body.command ? body.command.commandId : "";
  ctx.print(
    body.created
      ? `${what} for ${runId} accepted${kept && ` · command ${kept}`}${state}`
      : `${what} for ${runId} was already accepted${kept && ` as command ${kept}`}${state} (not sent twice)`,
  );
  return EXIT.ok;
}

export async function cancel(ctx: Context): Promise<ExitCode> {
  const runId = ctx.args[0] as string;
  const id = commandId(ctx);
  const raw: Record<string, unknown> = { commandId: id };
  const reason = stringValue(ctx.values, "reason");
  if (reason !== undefined) raw.reason = reason;
  const parsed = CancelBody.safeParse(raw);
  if (!parsed.success) throw invalidUsage(parsed.error, ctx.command);
  const { body } = await retrySafely(id, () =>
    ctx.api.call<{ created: boolean; command: CommandRecord | null; run: RunRecord }>(
      "POST",
      runPath(runId, "/cancel"),
      parsed.data,
    ),
  );
  if (ctx.values.json) {
    ctx.json(body);
    return EXIT.ok;
  }
  // A run cancelled with no runner attached keeps no cancel command: a repeat answers `command: null`.
  const cmd = body.command ? ` · command ${body.command.commandId}` : "";
  if (body.run.status === "cancelled") {
    ctx.print(body.created ? `run ${runId} is cancelled${cmd}` : `run ${runId} was already cancelled${cmd}`);
  } else if (isTerminal(body.run.status)) {
    ctx.print(`run ${runId} had already ended ${body.run.status}; nothing to cancel`);
  } else {
    const state = body.command ? ` · ${body.command.state}` : "";
    ctx.print(
      `cancel for ${runId} ${body.created ? "accepted" : "was already accepted"}${cmd}${state} · run ${body.run.status}; the runner has 30 s to stop`,
    );
  }
  return EXIT.ok;
}

export async function decide(ctx: Context): Promise<ExitCode> {
  const [runId, requestId] = ctx.args as [string, string];
  const raw: Record<string, unknown> = { decision: ctx.command === "approve" ? "approve" : "deny" };
  const reason = stringValue(ctx.values, "reason");
  if (reason !== undefined) raw.reason = reason;
  const parsed = ApprovalBody.safeParse(raw);
  if (!parsed.success) throw invalidUsage(parsed.error, ctx.command);
  let answer: { created: boolean; approval: ApprovalRecord };
  try {
    answer = (
      await ctx.api.call<{ created: boolean; approval: ApprovalRecord }>(
        "POST",
        runPath(runId, `/approvals/${encodeURIComponent(requestId)}`),
        parsed.data,
      )
    ).body;
  } catch (err) {
    if (err instanceof CliError && err.code === "stale") throw await explainStale(ctx, runId, err);
    throw err;
  }
  if (ctx.values.json) {
    ctx.json(answer);
    return EXIT.ok;
  }
  const verdict = answer.approval.state;
  ctx.print(
    answer.created
      ? `${requestId} on ${runId}: ${verdict}; the agent gets the decision`
      : `${requestId} on ${runId} was already ${verdict}; nothing changed`,
  );
  return EXIT.ok;
}

/** 409 stale: the request is unknown, expired or decided the other way. Say which, and what is pending. */
async function explainStale(ctx: Context, runId: string, err: CliError): Promise<CliError> {
  let pending = "";
  try {
    const run = await ctx.api.getRun(runId);
    const ids = run.pendingApprovals.map((a) => a.requestId);
    pending = ids.length > 0 ? `; pending on ${runId} now: ${ids.join(", ")}` : `; nothing is pending on ${runId}`;
  } catch {
    // the explanation is a courtesy; the refusal stands without it
  }
  return new CliError(
    err.code,
    `${err.message} (a decision only lands on a pending request: it may be unknown, expired, or decided the other way already)${pending}`,
    err.status,
  );
}
