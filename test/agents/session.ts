import { spawn } from "node:child_process";

/** What a session driver sees and does while an agent runs. */
export interface SessionContext {
  cwd: string;
  /** Writes one JSON line to the agent's stdin. */
  send(msg: unknown): void;
  /** Closes the agent's stdin. */
  close(): void;
}

export interface SessionOptions {
  argv: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** Lines written before the agent prints anything. */
  first: (ctx: SessionContext) => unknown[];
  /** Called with each line the agent prints (parsed, or null when it is not JSON). */
  react: (msg: Record<string, unknown> | null, ctx: SessionContext) => void;
  /** The agent is killed, and the session fails, if it has not exited by then. */
  boundMs: number;
}

export interface SessionResult {
  sent: string[];
  printed: string[];
  code: number | null;
  signal: string | null;
}

/**
 * Runs an agent process with piped stdio, answering its output line by line, until it exits:
 * how the recorder drives the real CLIs and the unit tests drive the fixture agents.
 */
export function runSession(o: SessionOptions): Promise<SessionResult> {
  const child = spawn(o.argv[0] as string, o.argv.slice(1), {
    cwd: o.cwd,
    env: o.env,
    stdio: ["pipe", "pipe", "ignore"],
  });
  const sent: string[] = [];
  const printed: string[] = [];
  const ctx: SessionContext = {
    cwd: o.cwd,
    send(msg) {
      const line = JSON.stringify(msg);
      sent.push(line);
      if (child.stdin.writable) child.stdin.write(`${line}\n`);
    },
    close: () => child.stdin.end(),
  };
  let buffer = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      printed.push(line);
      o.react(parse(line), ctx);
    }
  });
  for (const msg of o.first(ctx)) ctx.send(msg);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${o.argv.join(" ")} did not exit within ${o.boundMs} ms (printed ${printed.length} lines)`));
    }, o.boundMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ sent, printed, code, signal });
    });
  });
}

function parse(line: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(line) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
