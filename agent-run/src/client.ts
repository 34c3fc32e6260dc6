/** The control plane's HTTP API, with every failure turned into one CliError (code and message). */
import type { RunRecord } from "../../src/protocol/index.ts";
import { terminalValue } from "./safe-text.ts";

/** An HTTP, network or socket failure; printed as `agent-run: <code>: <message>`. */
export class CliError extends Error {
  readonly code: string;
  /** The HTTP status, when the server answered. */
  readonly status: number | undefined;
  constructor(code: string, message: string, status?: number) {
    super(message);
    this.code = code;
    this.status = status;
  }

  /** True when the server gave a verdict (4xx), so trying again would get the same answer. */
  get isVerdict(): boolean {
    return this.status !== undefined && this.status >= 400 && this.status < 500;
  }
}

const REQUEST_TIMEOUT_MS = 30_000;

interface ErrorJson {
  error?: { code?: unknown; message?: unknown };
  status?: unknown;
  finishedAt?: unknown;
}

export class Api {
  readonly url: string;
  readonly key: string;
  /** Answers are printed as text: their strings come back terminal-safe (safe-text.ts). */
  readonly forTerminal: boolean;
  constructor(url: string, key: string, options: { forTerminal?: boolean } = {}) {
    this.url = url;
    this.key = key;
    this.forTerminal = options.forTerminal ?? true;
  }

  /** `path` is encoded by the caller (see `runPath`). Resolves with the parsed JSON body of a 2xx. */
  async call<T>(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs = REQUEST_TIMEOUT_MS,
  ): Promise<{ status: number; body: T }> {
    const target = this.url + path;
    let res: Response;
    try {
      res = await fetch(target, {
        method,
        headers: { authorization: `Bearer ${this.key}`, "content-type": "application/json" },
        body: body === undefined ? null : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw networkError(this.url, err, timeoutMs);
    }
    const text = await res.text().catch((err: unknown) => {
      throw networkError(this.url, err, timeoutMs);
    });
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) throw httpError(res, json, text);
    if (json === undefined) {
      throw new CliError("bad_response", `${method} ${path} answered ${res.status} without a JSON body`, res.status);
    }
    return { status: res.status, body: (this.forTerminal ? terminalValue(json) : json) as T };
  }

  async getRun(runId: string, timeoutMs?: number): Promise<RunRecord> {
    return (await this.call<RunRecord>("GET", runPath(runId), undefined, timeoutMs)).body;
  }
}

export function runPath(runId: string, rest = ""): string {
  return `/v1/runs/${encodeURIComponent(runId)}${rest}`;
}

function httpError(res: Response, json: unknown, text: string): CliError {
  const body = (json ?? {}) as ErrorJson;
  const code = typeof body.error?.code === "string" ? body.error.code : `http_${res.status}`;
  let message = typeof body.error?.message === "string" ? body.error.message : describeBody(res, text);
  if (code === "gone" && typeof body.status === "string") {
    message += ` (it had ${body.status}${typeof body.finishedAt === "string" ? ` at ${body.finishedAt}` : ""})`;
  }
  return new CliError(code, message, res.status);
}

function describeBody(res: Response, text: string): string {
  const snippet = text.replace(/\s+/g, " ").trim().slice(0, 200);
  return `${res.status} ${res.statusText}${snippet ? `: ${snippet}` : ""}`.trim();
}

/** A failure to talk to the server at all: refused, reset, DNS, or no answer in time. */
export function networkError(url: string, err: unknown, timeoutMs = REQUEST_TIMEOUT_MS): CliError {
  const error = err as Error & { cause?: { code?: string; message?: string } };
  if (error.name === "TimeoutError" || error.name === "AbortError") {
    return new CliError("timeout", `${url} did not answer within ${timeoutMs} ms`);
  }
  const cause = error.cause?.code ?? error.cause?.message ?? error.message;
  return new CliError("unreachable", `cannot reach ${url} (${cause}); is the server running? (npm start)`);
}
