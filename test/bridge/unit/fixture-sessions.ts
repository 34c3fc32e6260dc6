import path from "node:path";
import { runSession } from "../../agents/session.ts";
import { FIXTURES, NODE } from "../harness/bridge.ts";

/** The JSON-RPC id → method of every request the drivers below (and the codex adapter) send. */
export const CODEX_REQUESTS: Record<string, string> = {
  "rb-initialize": "initialize",
  "rb-thread-start": "thread/start",
  "rb-thread-resume": "thread/resume",
  "rb-turn-prompt": "turn/start",
  "rb-stop-1": "turn/interrupt",
  "rb-next-1": "turn/start",
};

/**
 * Drives the fake app server the way the codex adapter does and returns what it printed:
 * approvals answered with `decision`; a "wait for interrupt" turn interrupted, then `next` sent.
 */
export async function codexFixtureSession(
  prompt: string,
  o: { decision?: string; next?: string; codexHome?: string; resume?: string } = {},
) {
  let interrupted = false;
  let thread = "";
  const session = await runSession({
    argv: [NODE, path.join(FIXTURES, "fake-codex-app-server.mjs")],
    cwd: FIXTURES,
    env: { PATH: process.env.PATH, CODEX_HOME: o.codexHome },
    boundMs: 10_000,
    first: () => [{ method: "initialize", id: "rb-initialize", params: { clientInfo: { name: "runner_bridge" } } }],
    react(msg, ctx) {
      const result = (msg?.result ?? {}) as { thread?: { id: string } };
      const params = (msg?.params ?? {}) as { turn: { id: string; status: string } };
      if (msg?.id === "rb-initialize") {
        ctx.send({ method: "initialized" });
        if (o.resume === undefined) {
          ctx.send({ method: "thread/start", id: "rb-thread-start", params: { cwd: ctx.cwd } });
        } else {
          ctx.send({ method: "thread/resume", id: "rb-thread-resume", params: { threadId: o.resume, cwd: ctx.cwd } });
        }
      } else if (msg?.id === "rb-thread-resume" && !result.thread) {
        ctx.close();
      } else if ((msg?.id === "rb-thread-start" || msg?.id === "rb-thread-resume") && result.thread) {
        thread = result.thread.id;
        const input = [{ type: "text", text: prompt }];
        ctx.send({ method: "turn/start", id: "rb-turn-prompt", params: { threadId: thread, input } });
      } else if (msg?.method === "item/commandExecution/requestApproval") {
        ctx.send({ id: msg.id, result: { decision: o.decision ?? "accept" } });
      } else if (msg?.method === "turn/started" && prompt.includes("wait for interrupt") && !interrupted) {
        interrupted = true;
        ctx.send({ method: "turn/interrupt", id: "rb-stop-1", params: { threadId: thread, turnId: params.turn.id } });
      } else if (msg?.method === "turn/completed" && params.turn.status === "interrupted" && o.next) {
        const input = [{ type: "text", text: o.next }];
        ctx.send({ method: "turn/start", id: "rb-next-1", params: { threadId: thread, input } });
      } else if (msg?.method === "turn/completed") {
        ctx.close();
      }
    },
  });
  if (session.code !== 0) throw new Error(`the fake codex exited ${session.code ?? session.signal}`);
  return session.printed;
}

/** Drives the fake claude the way the claude-code adapter does, allowing every tool (or denying). */
export async function claudeFixtureSession(
  prompt: string,
  o: { deny?: string; configDir?: string; resume?: string; cwd?: string } = {},
) {
  const argv = [NODE, path.join(FIXTURES, "fake-claude-code.mjs")];
  if (o.resume !== undefined) argv.push("--resume", o.resume);
  const session = await runSession({
    argv,
    cwd: o.cwd ?? FIXTURES,
    env: { PATH: process.env.PATH, CLAUDE_CONFIG_DIR: o.configDir },
    boundMs: 10_000,
    first: () => [
      { type: "control_request", request_id: "rb-initialize", request: { subtype: "initialize", hooks: null } },
      { type: "user", message: { role: "user", content: prompt }, parent_tool_use_id: null, session_id: "default" },
    ],
    react(msg, ctx) {
      const request = (msg?.request ?? {}) as { subtype?: string; input?: unknown };
      if (msg?.type === "control_request" && request.subtype === "can_use_tool") {
        const response =
          o.deny === undefined
            ? { behavior: "allow", updatedInput: request.input }
            : { behavior: "deny", message: o.deny };
        ctx.send({ type: "control_response", response: { subtype: "success", request_id: msg.request_id, response } });
      } else if (msg?.type === "assistant" && prompt.includes("wait for interrupt")) {
        ctx.send({ type: "control_request", request_id: "rb-stop-1", request: { subtype: "interrupt" } });
      } else if (msg?.type === "result") {
        ctx.close();
      }
    },
  });
  if (session.code !== 0 && o.resume === undefined) {
    throw new Error(`the fake claude exited ${session.code ?? session.signal}`);
  }
  return session.printed;
}
