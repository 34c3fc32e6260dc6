import { exports } from "cloudflare:workers";

/** The worker under test, called in-process (no `wrangler dev`). */
const worker = (exports as unknown as { default: Fetcher }).default;

export const BASE = "http://edge.test";

/** A generic stream's URL. */
export const streamUrl = (path: string) => `${BASE}/v1/stream/${path}`;

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

export function send(url: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(url, init);
}

export async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}
