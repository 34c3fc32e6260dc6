import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AgentEventType, AguiEventFamily, AguiEventType, ControlEventType } from "../../src/protocol/index.ts";
import { REPO } from "../support/wrangler-dev.ts";

// The SDK, the console, the CLI and the bridge name event types only through src/protocol/event-types.ts: a quoted event type (or the
// prefix of a family of them) in their sources drifts the day the protocol renames or adds one.

const NAMES: readonly string[] = [
  ...Object.values(AguiEventType),
  ...Object.values(AgentEventType),
  ...Object.values(ControlEventType),
];

/** Every string literal of a source file (comments left out) that is an event type or a prefix of one. */
function eventLiterals(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|\s)\/\/.*$/gm, "$1");
  const found: string[] = [];
  for (const match of code.matchAll(/(["'`])((?:\\.|(?!\1)[^\\\n])*)\1/g)) {
    const literal = match[2] ?? "";
    if (literal === "") continue;
    const prefix = /[._]$/.test(literal) && NAMES.some((name) => name.startsWith(literal) && name !== literal);
    if (NAMES.includes(literal) || prefix) found.push(literal);
  }
  return found;
}

function sources(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => /\.tsx?$/.test(file))
    .map((file) => path.join(dir, file));
}

describe("event type names in the SDK and its consumers", () => {
  it("the scan finds quoted names and family prefixes, and leaves comments and other strings alone", () => {
    const sample = [
      'if (type === "TEXT_MESSAGE_START") return;',
      "const family = 'TOOL_CALL_';",
      "if (event.type.startsWith(`approval.`)) return;",
      'const frame = "events"; // "run.created" in a comment',
      '/* "RUN_FINISHED" */ const kind = "message";',
    ].join("\n");
    expect(eventLiterals(sample)).toEqual(["TEXT_MESSAGE_START", "TOOL_CALL_", "approval."]);
  });

  // The SDK and every consumer of the log: the console, the CLI, the bridge.
  it.each(["client/src", "console/src", "agent-run/src", "runner-bridge/src"])(
    "%s quotes no event type and no prefix of one",
    (dir) => {
      const files = sources(path.join(REPO, dir));
      expect(files.length).toBeGreaterThan(10);
      const quoted = files.flatMap((file) =>
        eventLiterals(fs.readFileSync(file, "utf8")).map((literal) => `${path.relative(REPO, file)}: "${literal}"`),
      );
      expect(quoted).toEqual([]);
    },
  );

  it("each family prefix names at least two AG-UI event types", () => {
    for (const prefix of Object.values(AguiEventFamily)) {
      const members = Object.values(AguiEventType).filter((type) => type.startsWith(prefix));
      expect(members.length, `AG-UI types starting ${prefix}`).toBeGreaterThanOrEqual(2);
    }
  });
});
