import {
  type CheckpointInfo,
  type Fenced,
  fenced,
  type CheckpointQuery,
  ControlEventType,
  fail,
  isTerminal,
  ok,
  type Result,
} from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";

/** What checkpoint uploads need: the checkpoint store, and the stored sourceSeqs they cover. */
export type CheckpointHost = Pick<RunMachine, "checkpoints" | "control" | "log" | "mustLoad" | "now">;

/** A chunk of a checkpoint as stored and as passed to the object: at most 1 MiB (rows hold 2 MB). */
export const CHECKPOINT_CHUNK_BYTES = 1024 * 1024;

/**
 * May this upload become the checkpoint? Only the runner holding the current claim, for the
 * current generation, covering only events the edge has stored (the bridge uploads after the ack).
 */
function checkUploader(machine: CheckpointHost, upload: CheckpointQuery): Result<Fenced | null> {
  const run = machine.mustLoad();
  if (isTerminal(run.status)) return fail("terminal_run", `run is ${run.status}; it takes no checkpoint`);
  if (upload.epoch !== run.epoch || run.status === "recovering") {
    return ok(
      fenced(run.epoch, `epoch ${upload.epoch} does not hold the run (the current claim is epoch ${run.epoch})`),
    );
  }
  if (upload.generation !== run.generation) {
    return ok(
      fenced(run.epoch, `generation ${upload.generation} is not the run's current generation (${run.generation})`),
    );
  }
  const stored = machine.log.runnerState(upload.generation)?.lastSeq ?? 0;
  if (upload.sourceSeq > stored) {
    return fail(
      "checkpoint_ahead",
      `the checkpoint claims sourceSeq ${upload.sourceSeq}, but only ${stored} of generation ${upload.generation} are stored`,
    );
  }
  return ok(null);
}

export type CheckpointStored = { kind: "stored"; created: boolean; checkpoint: CheckpointInfo };

export type CheckpointStart = { kind: "same"; checkpoint: CheckpointInfo } | { kind: "upload"; uploadId: string };

/**
 * Starts an upload, or settles it at once when its digest is the current checkpoint's: the same
 * bytes again only move what they cover (an idempotent retry; the body is not read).
 */
export function beginCheckpoint(
  machine: CheckpointHost,
  upload: CheckpointQuery,
  maxBytes: number,
): Result<CheckpointStart | Fenced> {
  const allowed = checkUploader(machine, upload);
  if (!allowed.ok) return allowed;
  if (allowed.value) return ok(allowed.value);
  const current = machine.checkpoints.current();
  if (current?.info.digest === upload.digest) {
    machine.checkpoints.cover(upload.generation, upload.sourceSeq);
    return ok({ kind: "same", checkpoint: (machine.checkpoints.current() ?? current).info });
  }
  const uploadId = crypto.randomUUID();
  machine.checkpoints.begin(uploadId, maxBytes, machine.now);
  return ok({ kind: "upload", uploadId });
}

/** The upload's next chunk, in order; never past its size bound. */
export function addCheckpointChunk(
  machine: CheckpointHost,
  uploadId: string,
  index: number,
  body: Uint8Array,
): Result<null> {
  const upload = machine.checkpoints.upload(uploadId);
  if (!upload) return fail("conflict", "this checkpoint upload was superseded by a newer one");
  if (index !== upload.chunks) return fail("invalid_request", `expected chunk ${upload.chunks}, got ${index}`);
  if (body.byteLength > CHECKPOINT_CHUNK_BYTES) {
    return fail("invalid_request", `checkpoint chunks are at most ${CHECKPOINT_CHUNK_BYTES} bytes`);
  }
  if (upload.bytes + body.byteLength > upload.maxBytes) {
    return fail("checkpoint_too_large", `checkpoints are limited to ${upload.maxBytes} bytes`);
  }
  machine.checkpoints.addChunk(uploadId, index, body);
  return ok(null);
}

/** Makes a whole, verified upload the run's checkpoint (event `run.checkpoint`). */
export function commitCheckpoint(
  machine: CheckpointHost,
  uploadId: string,
  upload: CheckpointQuery,
): Result<CheckpointStored | Fenced> {
  const allowed = checkUploader(machine, upload);
  if (!allowed.ok) return allowed;
  if (allowed.value) return ok(allowed.value);
  const staged = machine.checkpoints.upload(uploadId);
  if (!staged) return fail("conflict", "this checkpoint upload was superseded by a newer one");
  const current = machine.checkpoints.current();
  if (current?.info.digest === upload.digest) {
    // The same bytes landed meanwhile: this upload adds nothing.
    machine.checkpoints.abort(uploadId);
    machine.checkpoints.cover(upload.generation, upload.sourceSeq);
    return ok({ kind: "stored", created: false, checkpoint: (machine.checkpoints.current() ?? current).info });
  }
  const { digest, generation, sourceSeq } = upload;
  const checkpoint = machine.checkpoints.commit(
    uploadId,
    { digest, generation, sourceSeq, bytes: staged.bytes },
    machine.now,
  );
  const run = machine.mustLoad();
  machine.control(run.epoch, ControlEventType.RUN_CHECKPOINT, { digest, generation, sourceSeq, bytes: staged.bytes });
  return ok({ kind: "stored", created: true, checkpoint });
}

/** Drops an unfinished upload (refused, cut off or failed): the current checkpoint stays. */
export function abortCheckpoint(machine: CheckpointHost, uploadId: string): Result<null> {
  machine.checkpoints.abort(uploadId);
  return ok(null);
}
