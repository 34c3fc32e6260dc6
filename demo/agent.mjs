#!/usr/bin/env node
// The demo agent: a scripted but realistic AG-UI session for runner-bridge's ndjson adapter.
// It streams a message, runs a tool (arguments streamed, then a result), asks for approval before
// writing a file and waits for the operator's decision on stdin, then finishes and exits 0. When
// its prompt asks for no fix (say "why do the payments tests fail?") it reports and finishes.
//   node demo/agent.mjs [--run ID] [--pace MS]     (MS between streamed pieces, default 60)
//   (or AGENT_RUN_ID and AGENT_RUN_DEMO_PACE_MS in its environment)
import fs from "node:fs";
import readline from "node:readline";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { run: { type: "string" }, pace: { type: "string" } } });
// Under runner-bridge the run's id and the pace may come from the environment (a pool's profile).
const runId = values.run ?? process.env.AGENT_RUN_ID ?? "demo";
const pace = Number(values.pace ?? process.env.AGENT_RUN_DEMO_PACE_MS ?? 60);
const threadId = `thread-${runId}`;
const REQUEST = "write-round-fix";

const emit = (type, data = {}) => fs.writeSync(1, `${JSON.stringify({ type, ...data })}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Words (and the spaces after them) as deltas, one per tick. */
async function say(messageId, text) {
  emit("TEXT_MESSAGE_START", { messageId, role: "assistant" });
  for (const delta of text.match(/\S+\s*/g) ?? []) {
    emit("TEXT_MESSAGE_CONTENT", { messageId, delta });
    await sleep(pace);
  }
  emit("TEXT_MESSAGE_END", { messageId });
}

async function tool(toolCallId, toolCallName, args, result, workMs) {
  emit("TOOL_CALL_START", { toolCallId, toolCallName, parentMessageId: "msg-1" });
  const json = JSON.stringify(args);
  for (let i = 0; i < json.length; i += 12) {
    emit("TOOL_CALL_ARGS", { toolCallId, delta: json.slice(i, i + 12) });
    await sleep(pace / 2);
  }
  emit("TOOL_CALL_END", { toolCallId });
  await sleep(workMs);
  emit("TOOL_CALL_RESULT", { messageId: `result-${toolCallId}`, toolCallId, role: "tool", content: result });
}

// stdin carries the run's prompt first ({"type":"prompt","text"}, when it has one), then the
// bridge's commands: {"type":"input",...} and {"type":"approval.resolved",...}.
const inbox = [];
let prompt = null;
let wake = null;
let closed = false;
const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message?.type === "prompt" && typeof message.text === "string") prompt = message.text;
  else inbox.push(message);
  wake?.();
});
lines.on("close", () => {
  closed = true;
  wake?.();
});

/** The operator's decision on REQUEST; input that arrives meanwhile is acknowledged. */
async function decision() {
  let notes = 0;
  for (;;) {
    const message = inbox.shift();
    if (message?.type === "approval.resolved" && message.requestId === REQUEST) return message;
    if (message?.type === "input") {
      await say(
        `msg-note-${++notes}`,
        `Noted: "${message.text}". I am still waiting for the approval to write the file.`,
      );
      continue;
    }
    if (message) continue;
    if (closed) return null;
    await new Promise((resolve) => (wake = resolve));
  }
}

emit("RUN_STARTED", { threadId, runId });
await say("msg-1", "I'll run the payments tests first to see what is failing.");
await tool(
  "call-1",
  "run_tests",
  { path: "test/payments", reporter: "dot" },
  "11 passed, 1 failed\nFAIL payments > rounds half-cent amounts\n  expected 10.01, received 10",
  pace * 8,
);
// Asked only to look (a prompt that asks for no fix or change), it reports and finishes on its own.
if (prompt !== null && !/\b(fix|change|edit|write|repair)/i.test(prompt)) {
  await say(
    "msg-2",
    "One test fails: roundCents truncates half cents instead of rounding them. " +
      "The fix is one line in src/payments/round.ts (Math.trunc to Math.round); ask me to fix it and I will.",
  );
  emit("RUN_FINISHED", { threadId, runId, result: { fixed: false } });
  process.exit(0);
}
await say(
  "msg-2",
  "One test fails: roundCents truncates half cents instead of rounding them. " +
    "The fix is one line in src/payments/round.ts, and writing files needs your approval.",
);
emit("approval.requested", {
  requestId: REQUEST,
  toolName: "write_file",
  input: { path: "src/payments/round.ts", change: "Math.trunc(x * 100) -> Math.round(x * 100)" },
});

const answer = await decision();
if (answer === null) {
  emit("RUN_ERROR", { message: "stdin closed before the approval was decided", code: "no_decision" });
  process.exit(1);
}
if (answer.decision === "approve") {
  await tool(
    "call-2",
    "write_file",
    { path: "src/payments/round.ts", line: 7, text: "  return Math.round(x * 100) / 100;" },
    "wrote src/payments/round.ts (1 line changed)",
    pace * 2,
  );
  await tool("call-3", "run_tests", { path: "test/payments", reporter: "dot" }, "12 passed", pace * 8);
  await say("msg-3", "Fixed: roundCents now rounds half cents, and all 12 payments tests pass.");
} else {
  await say(
    "msg-3",
    "Understood, I left src/payments/round.ts unchanged. The failing test stays red until roundCents uses Math.round.",
  );
}
emit("RUN_FINISHED", { threadId, runId, result: { fixed: answer.decision === "approve" } });
process.exit(0);
