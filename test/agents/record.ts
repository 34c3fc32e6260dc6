// Records one offline session of each real agent CLI (installed by install.mjs) into
// test/bridge/fixtures/recorded/: what the bridge's adapter writes to the agent's stdin
// (<name>.stdin.ndjson) and what the agent printed on stdout (<name>.ndjson), with the temp home,
// the host name, pids and the installation id scrubbed. No network and no credentials: the
// sessions show what the binaries print in a sandbox that has neither.
//
//   npx node test/agents/record.ts            # both (Node 22 runs the TypeScript as is)
//   npx node test/agents/record.ts codex      # one
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CLAUDE_BIN, CODEX_BIN, requireRealAgents } from "./paths.ts";
import { runSession, type SessionContext, type SessionOptions, type SessionResult } from "./session.ts";

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "bridge", "fixtures", "recorded");
const HOME = "/home/agent";

async function record(name: string, expectedExit: number, o: Omit<SessionOptions, "cwd" | "env" | "boundMs">) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "agent-record-"));
  const cwd = path.join(home, "work");
  fs.mkdirSync(cwd);
  // The environment the bridge gives an agent: PATH and HOME (so ~/.codex and ~/.claude are in it).
  const result = await runSession({ ...o, cwd, env: { PATH: process.env.PATH, HOME: home }, boundMs: 60_000 });
  if (result.code !== expectedExit)
    throw new Error(`${name} exited ${result.code ?? result.signal}, not ${expectedExit}`);
  save(name, home, result);
}

/** Replaces what only this machine and this temp dir would print. */
function scrub(lines: string[], home: string): string {
  const dashed = (p: string) => p.replace(/[^a-zA-Z0-9]/g, "-");
  const scrubbed = lines.map((line) =>
    line
      .replaceAll(home, HOME)
      .replaceAll(dashed(home), dashed(HOME))
      .replaceAll(`"${os.hostname()}"`, '"sandbox"')
      .replace(/"installationId":"[^"]*"/g, '"installationId":"00000000-0000-0000-0000-000000000000"')
      .replace(/"messaging_socket_path":"[^"]*"/g, '"messaging_socket_path":"/tmp/cc-socks/4242.sock"')
      .replace(/"pid":\d+/g, '"pid":4242')
      .replace(/"userAgent":"([^"(]*)\([^)]*\)/g, '"userAgent":"$1(Linux; x86_64)'),
  );
  return `${scrubbed.join("\n")}\n`;
}

function save(name: string, home: string, result: SessionResult): void {
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, `${name}.stdin.ndjson`), scrub(result.sent, home));
  fs.writeFileSync(path.join(out, `${name}.ndjson`), scrub(result.printed, home));
  const sessions = fs
    .readdirSync(home, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".jsonl") && !f.includes("telemetry"));
  console.log(`${name}: exit ${result.code}, ${result.printed.length} lines; session files under $HOME:`);
  for (const f of sessions) console.log(`  ${f}`);
  fs.rmSync(home, { recursive: true, force: true });
}

/** initialize → thread/start → turn/start, the offline reconnect errors, turn/interrupt, stdin closed. */
async function recordCodex(): Promise<void> {
  let thread = "";
  let turn = "";
  let interrupted = false;
  const interrupt = (ctx: SessionContext) => {
    if (interrupted || !turn) return;
    interrupted = true;
    ctx.send({ method: "turn/interrupt", id: "rb-stop-1", params: { threadId: thread, turnId: turn } });
  };
  await record("codex-app-server", 0, {
    argv: [CODEX_BIN, "app-server"],
    first: () => [
      {
        method: "initialize",
        id: "rb-initialize",
        params: { clientInfo: { name: "runner_bridge", title: "runner-bridge", version: "0.1.0" } },
      },
    ],
    react(msg, ctx) {
      const result = (msg?.result ?? {}) as { thread?: { id: string }; turn?: { id: string } };
      if (msg?.id === "rb-initialize") {
        ctx.send({ method: "initialized" });
        ctx.send({ method: "thread/start", id: "rb-thread-start", params: { cwd: ctx.cwd } });
      } else if (msg?.id === "rb-thread-start" && result.thread) {
        thread = result.thread.id;
        const input = [{ type: "text", text: "say hi" }];
        ctx.send({ method: "turn/start", id: "rb-turn-prompt", params: { threadId: thread, input } });
      } else if (msg?.id === "rb-turn-prompt" && result.turn) {
        turn = result.turn.id;
        setTimeout(() => interrupt(ctx), 10_000); // in case the retries read differently
      } else if (msg?.method === "error" && JSON.stringify(msg.params).includes("Reconnecting... 5/5")) {
        interrupt(ctx); // the last quick retry: from here codex waits for the network
      } else if (msg?.method === "turn/completed") {
        ctx.close(); // the app server exits 0 when its stdin closes
      }
    },
  });
}

/** The bridge's initialize control request and one prompt; claude answers "Not logged in" and exits 1. */
async function recordClaude(): Promise<void> {
  await record("claude-stream-json", 1, {
    argv: [
      CLAUDE_BIN,
      ...["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
      ...["--permission-prompt-tool", "stdio"],
    ],
    first: () => [
      { type: "control_request", request_id: "rb-initialize", request: { subtype: "initialize", hooks: null } },
      { type: "user", message: { role: "user", content: "say hi" }, parent_tool_use_id: null, session_id: "default" },
    ],
    react(msg, ctx) {
      if (msg?.type === "result") ctx.close();
    },
  });
}

requireRealAgents();
const which = process.argv[2];
if (!which || which === "codex") await recordCodex();
if (!which || which === "claude") await recordClaude();
