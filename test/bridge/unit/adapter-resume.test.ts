import { describe, expect, it } from "vitest";
import { createAdapter } from "../../../runner-bridge/src/adapters/index.ts";
import { adapterForProvider, resumeLaunch } from "../../../runner-bridge/src/adapters/resume.ts";

const lineOf = (reactions: { line?: string }[][] | undefined) =>
  (reactions ?? []).flat().map((e) => (e.line ? JSON.parse(e.line) : e));

describe("a resumed generation continues the provider's own session", () => {
  it("codex: after initialize the adapter sends thread/resume for the session, not thread/start", () => {
    const adapter = createAdapter("codex", { cwd: "/new/sandbox", resume: { provider: "codex", id: "thr_9" } });
    const init = adapter.onLine(JSON.stringify({ id: "rb-initialize", result: {} }));
    expect(lineOf(init.reactions)).toEqual([
      { method: "initialized" },
      { method: "thread/resume", id: "rb-thread-resume", params: { threadId: "thr_9", cwd: "/new/sandbox" } },
    ]);
    const resumed = adapter.onLine(JSON.stringify({ id: "rb-thread-resume", result: { thread: { id: "thr_9" } } }));
    expect(resumed.event).toMatchObject({ type: "agent.session", data: { provider: "codex", id: "thr_9" } });
  });

  it("codex: a refused thread/resume fails the run with codex's words", () => {
    const adapter = createAdapter("codex", { cwd: "/w", resume: { provider: "codex", id: "thr_9" } });
    adapter.onLine(JSON.stringify({ id: "rb-initialize", result: {} }));
    const error = { code: -32600, message: "no rollout found for thread id thr_9" };
    const refused = adapter.onLine(JSON.stringify({ id: "rb-thread-resume", error }));
    expect(refused.event).toMatchObject({
      type: "RUN_ERROR",
      data: { code: "codex_startup", message: "thread/resume failed: no rollout found for thread id thr_9" },
    });
    expect(adapter.outcome({ code: 0, signal: null }, { cancelled: false, stderrTail: "" })).toMatchObject({
      status: "failed",
      error: { code: "codex_startup", message: expect.stringContaining("thread/resume failed") },
    });
  });

  it("claude-code gets --resume <id> on its command line, an ndjson agent AGENT_RESUME_SESSION", () => {
    expect(resumeLaunch("claude-code", "sess-1")).toEqual({ args: ["--resume", "sess-1"], env: {} });
    expect(resumeLaunch("ndjson", "s-1")).toEqual({ args: [], env: { AGENT_RESUME_SESSION: "s-1" } });
    expect(resumeLaunch("codex", "thr_1")).toEqual({ args: [], env: {} });
    expect(["codex", "claude-code", "my-agent"].map(adapterForProvider)).toEqual(["codex", "claude-code", "ndjson"]);
  });
});
