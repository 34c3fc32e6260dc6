import type { CommandFrame, RunnerOutcome } from "../../../src/protocol/index.ts";
import type { Envelope } from "../command-file.ts";
import type { RunSpec } from "../rundir.ts";
import { APPROVAL_METHODS, codexEvents, INIT_ID, RESUME_ID, THREAD_ID } from "./agui/codex-events.ts";
import { clip, exitOutcome, parseObject } from "./common.ts";
import type { Adapter, CommandPlan, LineResult } from "./types.ts";
import { codexUsage, usageEvent } from "./usage.ts";

/**
 * `codex app-server` over stdio: JSON-RPC 2.0 without the "jsonrpc" member, one message per line.
 *
 * The bridge (through the inbox) sends `initialize`, then the `initialized` notification and
 * `thread/start` (a resumed generation: `thread/resume {threadId}` of the run's native session,
 * whose rollout files the bridge restored first), then `turn/start` with `--prompt` once the
 * thread id is known. Each journal
 * line becomes one AG-UI event (agui/codex-events.ts, docs/ADAPTERS.md): the thread/start
 * response reports the thread as `agent.session`, a turn is an AG-UI run, approval server requests
 * (`item/commandExecution/requestApproval`, `item/fileChange/requestApproval`, and the older
 * `execCommandApproval` / `applyPatchApproval`) become `approval.requested` with requestId
 * `codex-<id>`, answered `{id, result: {decision: "accept" | "decline"}}`; any other server request
 * is answered with a JSON-RPC error so the agent never hangs.
 * Input commands become `turn/start` (idle) or `turn/steer` (a turn is running); interrupt becomes
 * `turn/interrupt`. A turn that ends `completed` or `failed` closes the agent's stdin, so the app
 * server exits and the run ends (failed turn → failed run); after `interrupted` the thread waits
 * for the next input.
 */
type RpcId = string | number;

export function codexAdapter(spec: Pick<RunSpec, "cwd" | "prompt" | "resume">): Adapter {
  let threadId: string | null = null;
  let activeTurn: string | null = null;
  let closed = false;
  const prompt = spec.prompt;
  let fatal: string | null = null;
  let lastTurn: { status: string; error?: string } | null = null;
  const approvals = new Map<string, { id: RpcId; legacy: boolean }>();
  const toEvent = codexEvents();
  const usage = codexUsage();

  const env = (commandId: string, message: unknown): Envelope => ({ commandId, line: JSON.stringify(message) });
  const close = (commandId: string): Envelope[] => {
    closed = true;
    return [{ commandId, close: true }];
  };
  const turnStart = (commandId: string, rpcId: string, text: string): Envelope[] => [
    env(commandId, { method: "turn/start", id: rpcId, params: { threadId, input: [{ type: "text", text }] } }),
  ];

  return {
    name: "codex",
    startup() {
      return [
        env("codex:initialize", {
          method: "initialize",
          id: INIT_ID,
          params: { clientInfo: { name: "runner_bridge", title: "runner-bridge", version: "0.1.0" } },
        }),
      ];
    },
    onLine(text): LineResult {
      const msg = parseObject(text);
      const event = toEvent(msg, text);
      if (!msg) return { event };
      const method = typeof msg.method === "string" ? msg.method : null;
      const hasId = typeof msg.id === "string" || typeof msg.id === "number";
      const params = (msg.params ?? {}) as Record<string, unknown>;
      if (method === "thread/tokenUsage/updated") return { event: usageEvent(usage.delta(params), msg) };
      if (msg.id === THREAD_ID || msg.id === RESUME_ID)
        usage.setModel((msg.result as { model?: unknown } | undefined)?.model);
      if (method && hasId) {
        const id = msg.id as RpcId;
        if (APPROVAL_METHODS.has(method)) {
          const requestId = `codex-${id}`;
          approvals.set(requestId, { id, legacy: !method.includes("/") });
          return { event };
        }
        return {
          event,
          reactions: [
            [
              env(`codex:unsupported:${id}`, {
                id,
                error: { code: -32601, message: `runner-bridge does not handle ${method}` },
              }),
            ],
          ],
        };
      }
      if (method) {
        const reactions: Envelope[][] = [];
        const turn = (params.turn ?? {}) as { id?: unknown; status?: unknown; error?: { message?: unknown } | null };
        if (method === "turn/started" && typeof turn.id === "string") activeTurn = turn.id;
        if (method === "turn/completed") {
          activeTurn = null;
          const status = typeof turn.status === "string" ? turn.status : "completed";
          lastTurn = { status };
          if (typeof turn.error?.message === "string") lastTurn.error = turn.error.message;
          if (status !== "interrupted") reactions.push(close(`codex:close:${String(turn.id)}`));
        }
        return { event, reactions };
      }
      if (hasId) {
        const id = msg.id as RpcId;
        const reactions: Envelope[][] = [];
        const result = (msg.result ?? null) as Record<string, unknown> | null;
        const threadRequest = id === THREAD_ID || id === RESUME_ID;
        if (msg.error !== undefined && (id === INIT_ID || threadRequest)) {
          const what = id === INIT_ID ? "initialize" : id === THREAD_ID ? "thread/start" : "thread/resume";
          fatal = `${what} failed: ${JSON.stringify(msg.error)}`;
          reactions.push(close("codex:close:startup-error"));
        } else if (id === INIT_ID) {
          reactions.push([env("codex:initialized", { method: "initialized" })]);
          reactions.push([
            spec.resume
              ? env("codex:thread-resume", {
                  method: "thread/resume",
                  id: RESUME_ID,
                  params: { threadId: spec.resume.id, cwd: spec.cwd },
                })
              : env("codex:thread-start", { method: "thread/start", id: THREAD_ID, params: { cwd: spec.cwd } }),
          ]);
        } else if (threadRequest) {
          const thread = (result?.thread ?? {}) as { id?: unknown };
          if (typeof thread.id === "string") threadId = thread.id;
          if (threadId && prompt !== undefined)
            reactions.push(turnStart("codex:turn:prompt", "rb-turn-prompt", prompt));
        }
        return { event, reactions };
      }
      return { event };
    },
    command(cmd: CommandFrame): CommandPlan {
      switch (cmd.kind) {
        case "input": {
          if (closed) return { kind: "reject", reason: "the agent's stdin is closed (its turn finished)" };
          if (!threadId) return { kind: "defer" };
          const input = [{ type: "text", text: cmd.text ?? "" }];
          const message = activeTurn
            ? {
                method: "turn/steer",
                id: `rb-${cmd.commandId}`,
                params: { threadId, input, expectedTurnId: activeTurn },
              }
            : { method: "turn/start", id: `rb-${cmd.commandId}`, params: { threadId, input } };
          return { kind: "inbox", envelopes: [env(cmd.commandId, message)] };
        }
        case "approval": {
          if (!cmd.requestId || !cmd.decision) return { kind: "reject", reason: "approval without requestId/decision" };
          const request = approvals.get(cmd.requestId);
          if (!request) return { kind: "defer" }; // its journal line has not been read yet
          const decision = request.legacy
            ? cmd.decision === "approve"
              ? "approved"
              : "denied"
            : cmd.decision === "approve"
              ? "accept"
              : "decline";
          return { kind: "inbox", envelopes: [env(cmd.commandId, { id: request.id, result: { decision } })] };
        }
        case "interrupt": {
          if (!threadId || !activeTurn) return { kind: "reject", reason: "no turn is running" };
          return {
            kind: "inbox",
            envelopes: [
              env(cmd.commandId, {
                method: "turn/interrupt",
                id: `rb-${cmd.commandId}`,
                params: { threadId, turnId: activeTurn },
              }),
            ],
          };
        }
        default:
          return { kind: "reject", reason: `codex adapter cannot apply ${cmd.kind}` };
      }
    },
    outcome(exit, ctx): RunnerOutcome {
      if (ctx.cancelled) return exitOutcome(exit, ctx);
      if (fatal) return { status: "failed", error: { code: "codex_startup", message: clip(fatal) } };
      if (lastTurn?.status === "failed") {
        return { status: "failed", error: { code: "turn_failed", message: clip(lastTurn.error ?? "the turn failed") } };
      }
      return exitOutcome(exit, ctx);
    },
  };
}
