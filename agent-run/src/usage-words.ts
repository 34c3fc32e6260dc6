/**
 * A body our own zod schema refused before sending, worded as the flag the user typed: zod's
 * own text ("✖ Invalid option: expected one of …  → at role") never reaches the terminal.
 */
import type { z } from "zod";

/** Body field → the flag (or argument) that sets it. */
const FLAG_OF: Record<string, string> = {
  runId: "--id",
  input: "--input",
  agent: "--agent",
  timeouts: "--timeout",
  tags: "--tag",
  budget: "--max-tokens / --max-cost",
  role: "--role",
  interact: "--interact",
  ttlMs: "--ttl",
  reason: "--reason",
  commandId: "--command-id",
  text: "TEXT",
  action: "the action",
};

function flagOf(path: readonly PropertyKey[]): string {
  const [head, sub] = path.map(String);
  if (head === "timeouts" && sub) return `--timeout ${sub.replace(/Ms$/, "")}`;
  return head === undefined ? "the request" : (FLAG_OF[head] ?? head);
}

/** True for the wording zod writes itself, as opposed to a message our schemas give. */
const ZOD_WORDING = /^(Invalid|Too (big|small)|Unrecognized|Expected)\b/;

function describe(issue: z.core.$ZodIssue): string {
  const flag = flagOf(issue.path);
  switch (issue.code) {
    case "invalid_value":
      return `${flag} must be one of ${issue.values.map(String).join(", ")}`;
    case "too_small":
      return `${flag} must be at least ${String(issue.minimum)}${issue.origin === "string" ? " characters" : ""}`;
    case "too_big":
      return `${flag} must be at most ${String(issue.maximum)}${issue.origin === "string" ? " characters" : ""}`;
    case "invalid_type":
      return `${flag} must be ${issue.expected === "number" ? "a number" : `a ${issue.expected}`}`;
    case "unrecognized_keys":
      return `unknown ${issue.keys.length === 1 ? "field" : "fields"} ${issue.keys.join(", ")}`;
    default:
      return ZOD_WORDING.test(issue.message) ? `${flag} is not valid` : `${flag}: ${issue.message}`;
  }
}

/** One line: every issue in the flag's own words, `; `-separated. */
export function usageWords(error: z.ZodError): string {
  return [...new Set(error.issues.map(describe))].join("; ");
}
