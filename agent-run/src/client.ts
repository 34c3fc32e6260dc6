/**
 * The control plane's HTTP API for the CLI: the SDK's client (@agent-run/client) with the CLI's
 * own touches — answers made terminal-safe for printing, and hints in its error messages.
 */
import { ApiError, Client } from "@agent-run/client";
import type { RunRecord } from "../../src/protocol/index.ts";
import { terminalValue } from "./safe-text.ts";

/** Every failure the CLI prints as `agent-run: <code>: <message>`: the SDK's error, and usage errors. */
export const CliError = ApiError;
export type CliError = ApiError;

const REQUEST_TIMEOUT_MS = 30_000;

export class Api {
  readonly url: string;
  readonly key: string;
  /** Answers are printed as text: their strings come back terminal-safe (safe-text.ts). */
  readonly forTerminal: boolean;
  readonly client: Client;
  constructor(url: string, key: string, options: { forTerminal?: boolean } = {}) {
    this.url = url;
    this.key = key;
    this.forTerminal = options.forTerminal ?? true;
    // One attempt: the CLI's commands report what happened rather than retrying behind the user.
    this.client = new Client({ url, key, attempts: 1, timeoutMs: REQUEST_TIMEOUT_MS });
  }

  /** `path` is encoded by the caller (see `runPath`). Resolves with the parsed JSON body of a 2xx. */
  async call<T>(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs = REQUEST_TIMEOUT_MS,
  ): Promise<{ status: number; body: T }> {
    try {
      const answer = await this.client.transport.send<T>({ method, path, body, timeoutMs, idempotent: false });
      return { status: answer.status, body: (this.forTerminal ? terminalValue(answer.body) : answer.body) as T };
    } catch (err) {
      throw withHint(err);
    }
  }

  async getRun(runId: string, timeoutMs?: number): Promise<RunRecord> {
    return (await this.call<RunRecord>("GET", runPath(runId), undefined, timeoutMs)).body;
  }
}

export function runPath(runId: string, rest = ""): string {
  return `/v1/runs/${encodeURIComponent(runId)}${rest}`;
}

/** The CLI's words on top of the SDK's: how to start a server, and how a purged run had ended. */
export function withHint(err: unknown): unknown {
  if (!(err instanceof ApiError)) return err;
  if (err.code === "unreachable") err.message += "; is the server running? (npm start)";
  const body = err.body as { status?: unknown; finishedAt?: unknown } | undefined;
  if (err.code === "gone" && typeof body?.status === "string") {
    err.message += ` (it had ${body.status}${typeof body.finishedAt === "string" ? ` at ${body.finishedAt}` : ""})`;
  }
  return err;
}
