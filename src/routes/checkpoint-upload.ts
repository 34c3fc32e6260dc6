import type { RunApi } from "../objects/stubs.ts";
import {
  type CheckpointInfo,
  type CheckpointQuery,
  fail,
  fencedAsFailure,
  ok,
  type Result,
} from "../protocol/index.ts";
import { CHECKPOINT_CHUNK_BYTES } from "../run/checkpoints.ts";

const toHex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * Streams a checkpoint body into the run's object: read as it arrives, hashed on the way, passed
 * on in chunks of CHECKPOINT_CHUNK_BYTES, and reading stops at `maxBytes`. The object keeps the
 * chunks apart until `commit`, so a body that is too large, does not match its digest, or is cut
 * off is dropped whole and the previous checkpoint stays.
 */
export async function uploadCheckpoint(
  stub: RunApi,
  body: ReadableStream<Uint8Array> | null,
  upload: CheckpointQuery,
  maxBytes: number,
): Promise<Result<{ created: boolean; checkpoint: CheckpointInfo }>> {
  const begun = fencedAsFailure(await stub.checkpointBegin(upload, maxBytes));
  if (!begun.ok) return begun;
  if (begun.value.kind === "same") {
    await body?.cancel().catch(() => {});
    return ok({ created: false, checkpoint: begun.value.checkpoint });
  }
  const { uploadId } = begun.value;
  let sent: Result<null>;
  try {
    sent = await sendChunks(stub, uploadId, body, upload.digest, maxBytes);
  } catch {
    sent = fail("invalid_request", "the checkpoint body was cut off; nothing was stored");
  }
  const committed = sent.ok ? fencedAsFailure(await stub.checkpointCommit(uploadId, upload)) : sent;
  // The refusal is the answer; a failed clean-up must not replace it (the next upload drops
  // whatever chunks an unfinished one left).
  if (!committed.ok) {
    await stub.checkpointAbort(uploadId).catch(() => undefined);
    return committed;
  }
  return ok({ created: committed.value.created, checkpoint: committed.value.checkpoint });
}

async function sendChunks(
  stub: RunApi,
  uploadId: string,
  body: ReadableStream<Uint8Array> | null,
  digest: string,
  maxBytes: number,
): Promise<Result<null>> {
  const hash = new crypto.DigestStream("SHA-256");
  const hasher = hash.getWriter();
  const pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let total = 0;
  let index = 0;
  const flush = async (all: boolean): Promise<Result<null>> => {
    while (pendingBytes >= CHECKPOINT_CHUNK_BYTES || (all && pendingBytes > 0)) {
      const chunk = take(pending, Math.min(CHECKPOINT_CHUNK_BYTES, pendingBytes));
      pendingBytes -= chunk.byteLength;
      const stored = await stub.checkpointChunk(uploadId, index, chunk);
      if (!stored.ok) return stored;
      index += 1;
    }
    return ok(null);
  };
  const reader = body?.getReader();
  for (;;) {
    const read = reader ? await reader.read() : { done: true as const, value: undefined };
    if (read.done) break;
    total += read.value.byteLength;
    if (total > maxBytes) {
      await reader?.cancel().catch(() => {});
      return fail("checkpoint_too_large", `checkpoints are limited to ${maxBytes} bytes`);
    }
    await hasher.write(read.value);
    pending.push(read.value);
    pendingBytes += read.value.byteLength;
    const flushed = await flush(false);
    if (!flushed.ok) {
      await reader?.cancel().catch(() => {});
      return flushed;
    }
  }
  const flushed = await flush(true);
  if (!flushed.ok) return flushed;
  await hasher.close();
  const actual = `sha256:${toHex(await hash.digest)}`;
  if (actual !== digest) return fail("digest_mismatch", `the body's digest is ${actual}, not ${digest}`);
  return ok(null);
}

/** Removes the first `size` bytes from the queued parts, as one array. */
function take(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  while (at < size) {
    const part = parts[0] as Uint8Array;
    const used = Math.min(part.byteLength, size - at);
    out.set(part.subarray(0, used), at);
    at += used;
    if (used === part.byteLength) parts.shift();
    else parts[0] = part.subarray(used);
  }
  return out;
}
