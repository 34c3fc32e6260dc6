import { isTerminal, RunStatus } from "../../src/protocol/index.ts";

/** Base URL of the edge without a trailing slash, http(s). */
export function normalizeEdge(edge: string): string {
  const url = new URL(edge);
  if (url.protocol === "ws:") url.protocol = "http:";
  if (url.protocol === "wss:") url.protocol = "https:";
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Error(`--edge must be an http(s) URL, got ${edge}`);
  return url.toString().replace(/\/+$/, "");
}

export function runnerPath(runId: string): string {
  return `/v1/runs/${encodeURIComponent(runId)}/runner`;
}

/** The runner WebSocket's URL; the token travels in the Authorization header, never here. */
export function runnerSocketUrl(edge: string, runId: string): string {
  const url = new URL(normalizeEdge(edge) + runnerPath(runId));
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.toString();
}

export type Preflight =
  | { kind: "live"; status: RunStatus; epoch: number }
  | { kind: "terminal"; status: string }
  | { kind: "unknown" }
  | { kind: "denied"; message: string }
  | { kind: "unreachable"; message: string };

/**
 * One look at the run through the runner URL without an upgrade: 200 {status, epoch},
 * 404 unknown, 410 purged (terminal), 401/403 bad token.
 */
export async function preflight(edge: string, runId: string, token: string, timeoutMs = 10_000): Promise<Preflight> {
  let res: Response;
  try {
    res = await fetch(normalizeEdge(edge) + runnerPath(runId), {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    return { kind: "unreachable", message: (err as Error).message };
  }
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // not JSON; decided by the status alone
  }
  if (res.status === 404) return { kind: "unknown" };
  if (res.status === 410) return { kind: "terminal", status: typeof body.status === "string" ? body.status : "purged" };
  if (res.status === 401 || res.status === 403) {
    const error = body.error as { message?: string } | undefined;
    return {
      kind: "denied",
      message: `edge refused the runner token (${res.status}${error?.message ? `: ${error.message}` : ""})`,
    };
  }
  if (res.status !== 200) return { kind: "unreachable", message: `edge answered ${res.status}` };
  const status = RunStatus.safeParse(body.status);
  if (!status.success)
    return {
      kind: "unreachable",
      message: `edge preflight without a valid status: ${JSON.stringify(body).slice(0, 200)}`,
    };
  if (isTerminal(status.data)) return { kind: "terminal", status: status.data };
  const epoch = typeof body.epoch === "number" ? body.epoch : 0;
  return { kind: "live", status: status.data, epoch };
}
