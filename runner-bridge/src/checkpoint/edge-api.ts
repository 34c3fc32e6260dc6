import { CheckpointStored, RecoveryState } from "../../../src/protocol/index.ts";
import { EdgeClient } from "../../../client/src/index.ts";
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

/** An answer that was not a success: the SDK's one error, with the API's status, code and message. */
export { ApiError as EdgeRefusal } from "../../../client/src/index.ts";

export interface DownloadedCheckpoint {
  bytes: Buffer;
  digest: string;
  generation: number;
  sourceSeq: number;
}

const TIMEOUT_MS = 30_000;

/** The SDK's client under the runner token; one attempt, since the uploader has its own retry loop. */
function client(t: EdgeTarget): EdgeClient {
  return new EdgeClient({ url: normalizeEdge(t.edge), key: t.token, attempts: 1, timeoutMs: TIMEOUT_MS });
}

export async function getRecovery(t: EdgeTarget): Promise<RecoveryState> {
  const parsed = RecoveryState.safeParse(await client(t).recovery(t.runId));
  if (!parsed.success) throw new Error(`the edge's recovery state is malformed: ${parsed.error.message}`);
  return parsed.data;
}

export async function getCheckpoint(t: EdgeTarget): Promise<DownloadedCheckpoint> {
  const res = await client(t).getCheckpoint(t.runId, { timeoutMs: TIMEOUT_MS * 4 });
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
  const upload = { ...up, bytes: new Uint8Array(up.bytes) };
  const answer = await client(t).putCheckpoint(t.runId, upload, { timeoutMs: TIMEOUT_MS * 4 });
  const parsed = CheckpointStored.safeParse(answer);
  if (!parsed.success) throw new Error(`the edge's answer to a checkpoint is malformed: ${parsed.error.message}`);
  return parsed.data;
}
