/**
 * How each provider is told to continue its own session in a new generation, beyond what the
 * adapter sends on stdin (codex: `thread/resume` instead of `thread/start`, in codex.ts):
 * claude-code takes `--resume <session id>` on its command line, an ndjson agent the session id
 * in `AGENT_RESUME_SESSION` (its `--checkpoint` files are restored where it keeps them).
 */
export function resumeLaunch(adapter: string, sessionId: string): { args: string[]; env: Record<string, string> } {
  switch (adapter) {
    case "claude-code":
      return { args: ["--resume", sessionId], env: {} };
    case "ndjson":
      return { args: [], env: { AGENT_RESUME_SESSION: sessionId } };
    default:
      return { args: [], env: {} };
  }
}

/** The adapter a resumed generation uses when none is named: the one that reported the session. */
export function adapterForProvider(provider: string): string {
  return provider === "codex" || provider === "claude-code" ? provider : "ndjson";
}
