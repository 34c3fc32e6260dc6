import { afterAll, describe, expect, it } from "vitest";
import { CodexProtocol } from "../../agents/codex-schema.ts";
import { requireRealAgents } from "../../agents/paths.ts";
import { recordedLines } from "./agui-support.ts";

requireRealAgents();
const codex = new CodexProtocol();
afterAll(() => codex.dispose());

/** What each of our JSON-RPC request ids asks (the bridge's adapter and the recorder use these ids). */
const REQUESTS: Record<string, string> = {
  "rb-initialize": "initialize",
  "rb-thread-start": "thread/start",
  "rb-turn-prompt": "turn/start",
  "rb-stop-1": "turn/interrupt",
};
const requestMethod = (id: unknown) => REQUESTS[String(id)];

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
