import { ApiError, refusal, unreachable } from "./errors.ts";

export interface ClientOptions {
  /** The edge's origin, e.g. `https://edge.example.com` (no trailing path). */
  url: string;
  /** An API key or a token (runner or viewer); sent as `Authorization: Bearer`. */
  key: string;
  /** Per-request time limit (default 30 s). */
  timeoutMs?: number;
  /** Attempts for idempotent calls (default 3; 1 turns retries off). */
  attempts?: number;
  /** First retry delay; each next one doubles, up to `retryMaxMs` (defaults 200 ms and 5 s). */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Another fetch (tests, a Worker's service binding). */
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface Request extends CallOptions {
  method: string;
  /** Already encoded. */
  path: string;
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  body?: unknown;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Raw bytes instead of JSON (checkpoint uploads). */
  bytes?: Uint8Array;
  /** Safe to send again: a GET, or a write keyed by commandId / runId. */
  idempotent: boolean;
  /** Answer as a Response (binary downloads) rather than parsed JSON. */
  raw?: boolean;
}

export interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(new ApiError("aborted", "the call was aborted"));
      },
      { once: true },
    );
  });

/** Full jitter under a doubling cap, so many clients retrying do not move in step. */
export function backoffMs(attempt: number, minMs: number, maxMs: number): number {
  const cap = Math.min(maxMs, minMs * 2 ** attempt);
  return cap / 2 + Math.random() * (cap / 2);
}

export class Transport {
  readonly url: string;
  readonly key: string;
  private readonly options: ClientOptions;
  constructor(options: ClientOptions) {
    this.options = options;
    this.url = options.url.replace(/\/+$/, "");
    this.key = options.key;
  }

  async send<T>(request: Request): Promise<Answer<T>> {
    const attempts = request.idempotent ? Math.max(1, this.options.attempts ?? 3) : 1;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once<T>(request);
      } catch (err) {
        const last = attempt + 1 >= attempts;
        if (last || !(err instanceof ApiError) || !err.isTransient) throw err;
        await sleep(
          backoffMs(attempt, this.options.retryMinMs ?? 200, this.options.retryMaxMs ?? 5_000),
          request.signal,
        );
      }
    }
  }

  private async once<T>(request: Request): Promise<Answer<T>> {
    const timeoutMs = request.timeoutMs ?? this.options.timeoutMs ?? 30_000;
    const signals = [AbortSignal.timeout(timeoutMs)];
    if (request.signal) signals.push(request.signal);
    const signal = AbortSignal.any(signals);
    const target = this.url + request.path + queryString(request.query);
    const headers: Record<string, string> = { ...request.headers, authorization: `Bearer ${this.key}` };
    let body: BodyInit | null = null;
    if (request.bytes) {
      headers["content-type"] = "application/octet-stream";
      body = request.bytes as unknown as BodyInit;
    } else if (request.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(request.body);
    }
    const doFetch = this.options.fetch ?? fetch;
    let res: Response;
    let text = "";
    try {
      res = await doFetch(target, { method: request.method, headers, body, signal });
      if (request.raw && res.ok) return { status: res.status, body: res as T, headers: res.headers };
      text = await res.text();
    } catch (err) {
      throw unreachable(this.url, err, timeoutMs, request.signal?.aborted ?? false);
    }
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) throw refusal(res.status, res.statusText, json, text);
    if (json === undefined && request.method !== "HEAD") {
      throw new ApiError(
        "bad_response",
        `${request.method} ${request.path} answered ${res.status} without JSON`,
        res.status,
      );
    }
    return { status: res.status, body: json as T, headers: res.headers };
  }
}

function queryString(query: Request["query"]): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) params.append(name, item);
    else params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

export const segment = encodeURIComponent;
