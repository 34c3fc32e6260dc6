/** HTTP helpers: anything unexpected stops the run with the exact request and response. */
import type { Target } from "./targets.ts";

/** The same for every target: no compression, so both sides send the same bytes. */
const COMMON_HEADERS = { "accept-encoding": "identity" };
export const JSON_TYPE = "application/json";
/** The API key (tenant alpha) all run traffic uses, on every one of our targets. */
export const BENCH_API_KEY = "dev-key-alpha";

export class UnexpectedResponse extends Error {}

export async function call(
  method: string,
  url: string,
  options: { body?: string; headers?: Record<string, string>; expect: number[]; signal?: AbortSignal },
): Promise<Response> {
  const headers = { ...COMMON_HEADERS, ...options.headers };
  const res = await fetch(url, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
    signal: options.signal ?? AbortSignal.timeout(30_000),
  }).catch((error: Error) => {
    if (options.signal?.aborted) throw error;
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    throw new Error(`${method} ${url} failed (${error.message}${cause})`);
  });
  if (!options.expect.includes(res.status)) {
    const text = await res.text().catch((err: Error) => `<body unreadable: ${err.message}>`);
    const body =
      options.body === undefined ? "" : `\n  body (${options.body.length} chars): ${options.body.slice(0, 400)}`;
    throw new UnexpectedResponse(
      `unexpected response\n  request: ${method} ${url}\n  headers: ${JSON.stringify(headers)}${body}\n` +
        `  response: ${res.status} ${res.statusText}\n  headers: ${JSON.stringify(Object.fromEntries(res.headers))}\n` +
        `  body: ${text.slice(0, 2000)}`,
    );
  }
  return res;
}

/** One counter for every stream and run id, so no two passes share a name. */
let streamCounter = 0;
export function nextId(): number {
  streamCounter += 1;
  return streamCounter;
}

export function streamUrl(target: Target, kind: string): string {
  return `${target.url}/v1/stream/bench/${kind}/${process.pid}-${nextId()}`;
}

/** Creates an empty JSON-mode stream and returns its tail offset. */
export async function createJsonStream(url: string): Promise<string> {
  const res = await call("PUT", url, { headers: { "content-type": JSON_TYPE }, expect: [201] });
  await res.arrayBuffer();
  return res.headers.get("stream-next-offset") ?? "-1";
}

export async function appendJson(url: string, body: string): Promise<void> {
  const res = await call("POST", url, { body, headers: { "content-type": JSON_TYPE }, expect: [200, 204] });
  await res.arrayBuffer();
}
