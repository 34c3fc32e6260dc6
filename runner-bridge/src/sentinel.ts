/** The exit sentinel the supervisor appends to the journal when the agent has exited. */
export const SENTINEL_KEY = "__runnerBridgeExit";

export interface ExitInfo {
  /** Exit code, or null when the agent died of a signal. */
  code: number | null;
  signal: string | null;
  /** Set when the agent could not be started at all. */
  spawnError?: string;
}

export function formatSentinel(nonce: string, exit: ExitInfo): string {
  return JSON.stringify({ [SENTINEL_KEY]: { nonce, ...exit } });
}

/** The exit info if `line` is this run's sentinel (right nonce), else null: anything else is data. */
export function parseSentinel(line: string, nonce: string): ExitInfo | null {
  if (!line.startsWith(`{"${SENTINEL_KEY}"`)) return null;
  try {
    const value = (JSON.parse(line) as Record<string, unknown>)[SENTINEL_KEY] as Record<string, unknown> | undefined;
    if (!value || value.nonce !== nonce) return null;
    const code = typeof value.code === "number" ? value.code : null;
    const signal = typeof value.signal === "string" ? value.signal : null;
    const info: ExitInfo = { code, signal };
    if (typeof value.spawnError === "string") info.spawnError = value.spawnError;
    return info;
  } catch {
    return null;
  }
}
