import { expect } from "vitest";
import { advance, call, createRun, DAY, getRun } from "./helpers.ts";
import { agentEvent, claim, type SocketProbe } from "./sockets.ts";

/** Deadlines of a run that is lost quickly: a 1 s lease, a 5 s takeover window, a minute to recover. */
export const LOSABLE = { heartbeatMs: 1_000, takeoverMs: 5_000, recoverMs: 60_000, idleMs: 40 * DAY };

export async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${[...digest].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Bytes that differ at every position, so a misplaced or repeated chunk cannot pass for them. */
export function patterned(size: number, salt = 0): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >>> 8) * 7 + (i >>> 16) + salt) & 0xff;
  return bytes;
}

export interface Upload {
  epoch: number;
  generation: number;
  sourceSeq: number;
  body: Uint8Array;
  /** Defaults to the body's own digest. */
  digest?: string;
}

export async function putCheckpoint(runId: string, runnerToken: string, upload: Upload): Promise<Response> {
  const digest = upload.digest ?? (await sha256(upload.body));
  const query = `epoch=${upload.epoch}&generation=${upload.generation}&sourceSeq=${upload.sourceSeq}&digest=${digest}`;
  return call(`/v1/runs/${runId}/checkpoint?${query}`, {
    method: "PUT",
    key: runnerToken,
    headers: { "content-type": "application/octet-stream" },
    body: upload.body,
  });
}

/** The runner stops heartbeating and nobody takes over: the run is recovering. */
export async function lose(runId: string): Promise<void> {
  await advance(runId, LOSABLE.heartbeatMs);
  expect((await getRun(runId)).status).toBe("stalled");
  await advance(runId, LOSABLE.takeoverMs);
  expect((await getRun(runId)).status).toBe("recovering");
}

export const session = (sourceSeq: number, id = "thread-1", provider = "codex") =>
  agentEvent(sourceSeq, "agent.session", { provider, id });

export interface LiveRun {
  runId: string;
  runnerToken: string;
  viewerToken: string;
  runner: SocketProbe;
  epoch: number;
}

/** A claimed run that stored `events` (generation 1) and, if given, a checkpoint covering `checkpointAt`. */
export async function runWith(
  events: ReturnType<typeof agentEvent>[],
  checkpointAt?: number,
  timeouts: Record<string, number> = {},
): Promise<LiveRun> {
  const created = await createRun({ timeouts: { ...LOSABLE, ...timeouts } });
  const runId = created.run.id;
  const { runner, epoch } = await claim(runId, created.runnerToken);
  if (events.length > 0) {
    runner.send({ type: "events", epoch, events });
    await runner.next("ack");
  }
  if (checkpointAt !== undefined) {
    const response = await putCheckpoint(runId, created.runnerToken, {
      epoch,
      generation: 1,
      sourceSeq: checkpointAt,
      body: patterned(1000),
    });
    expect(response.status).toBe(201);
  }
  return { runId, runnerToken: created.runnerToken, viewerToken: created.viewerToken, runner, epoch };
}

/** POST /recover as the tenant's API key. */
export function recover(runId: string, action: string, commandId: string): Promise<Response> {
  return call(`/v1/runs/${runId}/recover`, { method: "POST", json: { action, commandId } });
}
