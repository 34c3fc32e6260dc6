import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CodexProtocol } from "../../agents/codex-schema.ts";
import { requireRealAgents } from "../../agents/paths.ts";
import { tempDir } from "../harness/bridge.ts";
import { CODEX_REQUESTS, claudeFixtureSession, codexFixtureSession } from "./fixture-sessions.ts";

requireRealAgents();
const codex = new CodexProtocol();
afterAll(() => codex.dispose());

const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, any>);

describe("the fake codex keeps its thread in a rollout file and resumes it as codex does", () => {
  it("thread/resume continues the recorded thread, in shapes codex 0.171.0 defines", async () => {
    const home = tempDir("codex-home-");
    await codexFixtureSession("first", { codexHome: home });
    const rollouts = fs.readdirSync(path.join(home, "sessions"), { recursive: true }).map(String);
    expect(rollouts.filter((f) => f.endsWith(".jsonl"))).toEqual([
      expect.stringMatching(/^\d{4}\/\d{2}\/\d{2}\/rollout-[\dT-]+-thr_1\.jsonl$/),
    ]);

    const printed = await codexFixtureSession("second", { codexHome: home, resume: "thr_1" });
    expect(printed.flatMap((line) => codex.problems(JSON.parse(line), (id) => CODEX_REQUESTS[String(id)]))).toEqual([]);
    const messages = parsed(printed);
    expect(messages.find((m) => m.id === "rb-thread-resume")?.result.thread.id).toBe("thr_1");
    expect(messages.filter((m) => m.method === "turn/started").map((m) => m.params.turn.id)).toEqual(["turn_2"]);
  });

  it("refuses to resume a thread whose rollout is not under CODEX_HOME, with codex's error", async () => {
    const printed = parsed(await codexFixtureSession("x", { codexHome: tempDir("codex-home-"), resume: "thr_1" }));
    expect(printed.find((m) => m.id === "rb-thread-resume")).toEqual({
      id: "rb-thread-resume",
      error: { code: -32600, message: "no rollout found for thread id thr_1" },
    });
  });
});

describe("the fake claude keeps a transcript per cwd and resumes it as claude does", () => {
  it("--resume continues the session under the same id; numbering goes on from the transcript", async () => {
    const config = tempDir("claude-config-");
    const cwd = tempDir("claude-cwd-");
    await claudeFixtureSession("first", { configDir: config, cwd });
    const project = path.join(config, "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"));
    expect(fs.readdirSync(project)).toEqual(["sess-fixture.jsonl"]);

    const printed = parsed(await claudeFixtureSession("second", { configDir: config, cwd, resume: "sess-fixture" }));
    expect(printed.find((m) => m.type === "system")?.session_id).toBe("sess-fixture");
    expect(printed.filter((m) => m.type === "assistant").map((m) => m.message.id)).toEqual(["msg_fixture_2"]);
  });

  it("fails with claude's words when the transcript is not in the cwd's projects directory", async () => {
    const printed = parsed(
      await claudeFixtureSession("x", { configDir: tempDir("claude-config-"), cwd: tempDir("cwd-"), resume: "sess-1" }),
    );
    expect(printed).toEqual([
      expect.objectContaining({
        type: "result",
        is_error: true,
        errors: ["No conversation found with session ID: sess-1"],
      }),
    ]);
  });
});
