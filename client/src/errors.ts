/** The one error every SDK call throws: the API's refusal, or a failure to reach it at all. */
export class ApiError extends Error {
  /** The API's error code (src/protocol/errors.ts), or `timeout`, `unreachable`, `aborted`, `bad_response`. */
  readonly code: string;
  /** The HTTP status, when the server answered. */
  readonly status: number | undefined;
  /** The refusal's whole JSON body, when it had one (a purged run's 410 carries `status`, `finishedAt`). */
  readonly body: unknown;
  constructor(code: string, message: string, status?: number, body?: unknown) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.body = body;
  }

  /** True when the server gave a verdict (4xx): asking again gets the same answer. */
  get isVerdict(): boolean {
    return this.status !== undefined && this.status >= 400 && this.status < 500;
  }

  /** Worth trying again, for an idempotent call: no answer, a 5xx, or a 429. */
  get isTransient(): boolean {
    if (this.code === "aborted" || this.code === "bad_response") return false;
    return this.status === undefined || this.status >= 500 || this.status === 429;
  }
}

interface ErrorJson {
  error?: { code?: unknown; message?: unknown };
}

/** The error a non-2xx answer stands for: its `{error: {code, message}}`, else the status. */
export function refusal(status: number, statusText: string, json: unknown, text: string): ApiError {
  const body = (json ?? {}) as ErrorJson;
  const code = typeof body.error?.code === "string" ? body.error.code : `http_${status}`;
  const snippet = text.replace(/\s+/g, " ").trim().slice(0, 200);
  const message =
    typeof body.error?.message === "string"
      ? body.error.message
      : `${status} ${statusText}${snippet ? `: ${snippet}` : ""}`.trim();
  return new ApiError(code, message, status, json);
}

/** A failure to get any answer: refused, reset, DNS, aborted by the caller, or out of time. */
export function unreachable(url: string, err: unknown, timeoutMs: number, aborted: boolean): ApiError {
  if (aborted) return new ApiError("aborted", `the call to ${url} was aborted`);
  const error = err as Error & { cause?: { code?: string; message?: string } };
  if (error?.name === "TimeoutError") return new ApiError("timeout", `${url} did not answer within ${timeoutMs} ms`);
  const cause = error?.cause?.code ?? error?.cause?.message ?? error?.message ?? String(err);
  return new ApiError("unreachable", `cannot reach ${url} (${cause})`);
}
