import { afterAll, describe, expect, it } from "vitest";
import { CodexProtocol } from "../../agents/codex-schema.ts";
import { requireRealAgents } from "../../agents/paths.ts";
import { recordedLines } from "./agui-support.ts";
import { CODEX_REQUESTS, claudeFixtureSession, codexFixtureSession } from "./fixture-sessions.ts";

requireRealAgents();
const codex = new CodexProtocol();
afterAll(() => codex.dispose());

const requestMethod = (id: unknown) => CODEX_REQUESTS[String(id)];

describe("the shapes the real codex defines (its own JSON Schema)", () => {
  it("the recorded session matches the installed codex: re-record when the pin moves", () => {
    expect(codex.version()).toBe("codex-cli 0.171.0");
    const problems = recordedLines("codex-app-server").flatMap((line) =>
      codex.problems(JSON.parse(line) as Record<string, unknown>, requestMethod),
    );
    expect(problems).toEqual([]);
  });

  it("a message codex would not print is caught, naming the field", () => {
    const line = recordedLines("codex-app-server").find((l) => l.includes('"turn/started"')) as string;
    const message = JSON.parse(line) as { params: { turn: { status: string } } };
    message.params.turn.status = "running";
    expect(codex.problems(message, requestMethod).join("\n")).toMatch(/turn\.status/);
  });
});

describe("the fixture agents speak the real CLIs' shapes", () => {
  it.each([
    ["an approved command", "clean up, needs approval", {}],
    ["a declined command", "needs approval", { decision: "decline" }],
    ["an interrupted turn, then the next one", "wait for interrupt", { next: "now finish" }],
  ])("every message the fake codex prints in %s is one codex 0.171.0 defines", async (_name, prompt, o) => {
    const printed = await codexFixtureSession(prompt, o);
    const problems = printed.flatMap((line) =>
      codex.problems(JSON.parse(line) as Record<string, unknown>, (id) => CODEX_REQUESTS[String(id)]),
    );
    expect(problems).toEqual([]);
  });

  it("the fake claude's messages are shaped like the real claude's, and carry what the adapter reads", async () => {
    const printed = [
      ...(await claudeFixtureSession("clean up, needs approval")),
      ...(await claudeFixtureSession("wait for interrupt")),
    ].map((line) => JSON.parse(line) as Json);
    const real = new Map(recordedLines("claude-stream-json").map((line) => [kind(JSON.parse(line)), JSON.parse(line)]));
    const checked = new Set<string>();
    const problems = printed.flatMap((message) => {
      const reference = real.get(kind(message));
      if (!reference) return [];
      checked.add(kind(message));
      return [
        ...shapeProblems(message, reference, kind(message)),
        ...(CLAUDE_READS[kind(message)] ?? [])
          .filter((p) => at(message, p) === undefined)
          .map((p) => `${kind(message)}: no ${p}`),
      ];
    });
    expect(problems).toEqual([]);
    expect([...checked].sort()).toEqual(["assistant", "control_response/success", "result", "system/init"]);
  });
});

type Json = Record<string, unknown>;
const kind = (m: Json) =>
  m.type === "system"
    ? `system/${String(m.subtype)}`
    : m.type === "control_response"
      ? `control_response/${String((m.response as Json)?.subtype)}`
      : String(m.type);

/** What the claude-code adapter and its mapping read from each kind of message. */
const CLAUDE_READS: Record<string, string[]> = {
  "system/init": ["session_id", "uuid"],
  assistant: ["message.id", "message.content", "session_id", "uuid"],
  result: ["subtype", "is_error", "result", "session_id", "uuid"],
};

const at = (value: unknown, dotted: string): unknown =>
  dotted.split(".").reduce<unknown>((v, key) => (v && typeof v === "object" ? (v as Json)[key] : undefined), value);

const typeOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** Every field of `fake` exists in `real` with the same JSON type (null on either side matches: nullable). */
function shapeProblems(fake: unknown, real: unknown, where: string): string[] {
  if (real === null || fake === null) return [];
  if (typeOf(fake) !== typeOf(real)) return [`${where}: ${typeOf(fake)} where claude prints ${typeOf(real)}`];
  if (typeOf(fake) !== "object") return [];
  return Object.entries(fake as Json).flatMap(([key, value]) =>
    key in (real as Json)
      ? shapeProblems(value, (real as Json)[key], `${where}.${key}`)
      : [`${where}.${key}: claude prints no such field`],
  );
}
