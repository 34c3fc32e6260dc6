import { CheckpointStored, RecoveryState } from "../../../src/protocol/index.ts";
import { normalizeEdge } from "../edge.ts";

/**
 * The runner's HTTP routes for recovery (docs/PROTOCOL.md), under the runner token: the run's
 * recovery state, and its checkpoint up and down.
 */
export interface EdgeTarget {
  edge: string;
  runId: string;
  token: string;
}

/** An answer that was not a success: its status and the API's error code and message. */
export class EdgeRefusal extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
  }
}

export interface DownloadedCheckpoint {
  bytes: Buffer;
  digest: string;
  generation: number;
  sourceSeq: number;
}

const TIMEOUT_MS = 30_000;

function url(t: EdgeTarget, route: string): string {
  return `${normalizeEdge(t.edge)}/v1/runs/${encodeURIComponent(t.runId)}/${route}`;
}

async function refusal(res: Response): Promise<EdgeRefusal> {
  let error: { code?: unknown; message?: unknown } = {};
  try {
    error = ((await res.json()) as { error?: typeof error }).error ?? {};
  } catch {
    // not JSON: the status says it
  }
  return new EdgeRefusal(
    res.status,
    typeof error.code === "string" ? error.code : "http_error",
    typeof error.message === "string" ? error.message : res.statusText,
  );
}

export async function getRecovery(t: EdgeTarget): Promise<RecoveryState> {
  const res = await fetch(url(t, "recovery"), {
    headers: { authorization: `Bearer ${t.token}` },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (!res.ok) throw await refusal(res);
  const parsed = RecoveryState.safeParse(await res.json());
  if (!parsed.success) throw new Error(`the edge's recovery state is malformed: ${parsed.error.message}`);
  return parsed.data;
}

export async function getCheckpoint(t: EdgeTarget): Promise<DownloadedCheckpoint> {
  const res = await fetch(url(t, "checkpoint"), {
    headers: { authorization: `Bearer ${t.token}` },
    signal: AbortSignal.timeout(TIMEOUT_MS * 4),
  });
  if (!res.ok) throw await refusal(res);
  return {
    bytes: Buffer.from(await res.arrayBuffer()),
    digest: res.headers.get("checkpoint-digest") ?? "",
    generation: Number(res.headers.get("checkpoint-generation")),
    sourceSeq: Number(res.headers.get("checkpoint-source-seq")),
  };
}

export interface CheckpointUpload {
  epoch: number;
  generation: number;
  sourceSeq: number;
  digest: string;
  bytes: Buffer;
}

/** Uploads a checkpoint; resolves with the edge's record of it (201 new, 200 the same digest again). */
export async function putCheckpoint(t: EdgeTarget, up: CheckpointUpload): Promise<CheckpointStored> {
  const query = new URLSearchParams({
    epoch: String(up.epoch),
    generation: String(up.generation),
    sourceSeq: String(up.sourceSeq),
    digest: up.digest,
  });
  const res = await fetch(`${url(t, "checkpoint")}?${query}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${t.token}`, "content-type": "application/octet-stream" },
    body: new Uint8Array(up.bytes),
    signal: AbortSignal.timeout(TIMEOUT_MS * 4),
  });
  if (!res.ok) throw await refusal(res);
  const parsed = CheckpointStored.safeParse(await res.json());
  if (!parsed.success) throw new Error(`the edge's answer to a checkpoint is malformed: ${parsed.error.message}`);
  return parsed.data;
}
