/**
 * The shape of a provider's native session id, checked before the id reaches the agent's command
 * line (`claude --resume <id>`), its stdin (codex `thread/resume`), its environment
 * (`AGENT_RESUME_SESSION`) or a file name (collecting and restoring checkpoints). The id comes
 * from the agent's own output, so a compromised agent chooses it: it must start with a letter or
 * digit (never `-`, so it cannot read as a flag) and hold no path separator.
 */
interface Shape {
  pattern: RegExp;
  what: string;
  chars: string;
}
const UUID_LIKE = "letters, digits, '-' and '_', at most 128, starting with a letter or digit";
const SHAPES: Record<string, Shape> = {
  // codex thread ids and claude session ids are UUIDs; letters, digits, '-' and '_' cover both.
  codex: { pattern: /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/, what: "a codex thread id", chars: UUID_LIKE },
  "claude-code": { pattern: /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/, what: "a claude session id", chars: UUID_LIKE },
};
const ANY_AGENT: Shape = {
  pattern: /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/,
  what: "a session id",
  chars: "letters, digits, '.', '_', ':' and '-', at most 200, starting with a letter or digit",
};

/** Null when `id` has the shape of the adapter's session ids, else why it does not. */
export function sessionIdProblem(adapter: string, id: string): string | null {
  const shape = SHAPES[adapter] ?? ANY_AGENT;
  if (shape.pattern.test(id)) return null;
  const flag = id.startsWith("-") ? " (it reads as a command-line flag)" : "";
  return `session id ${JSON.stringify(id.slice(0, 80))} is not ${shape.what}${flag}: ${shape.chars}`;
}
