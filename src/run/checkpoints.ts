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
import { CheckpointStore } from "./checkpoint-store.ts";
import type { RunMachine } from "./run-machine.ts";

/** What checkpoint uploads need besides their store: the run, its stored sourceSeqs, its log. */
export type CheckpointHost = Pick<RunMachine, "control" | "log" | "mustLoad" | "now">;

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

/** The current checkpoint and where its chunks are stored. */
export interface CheckpointHead {
  checkpoint: CheckpointInfo;
  uploadId: string;
  chunks: number;
}

/**
 * The run's checkpoint: uploads (begin, chunk…, commit or abort) and reads. The one holder of the
 * checkpoint tables (checkpoint-store.ts); everything else reaches them through these operations.
 */
export class Checkpoints {
  private readonly store: CheckpointStore;
  private readonly host: CheckpointHost;

  constructor(sql: SqlStorage, host: CheckpointHost) {
    this.store = new CheckpointStore(sql);
    this.host = host;
  }

  /** The current checkpoint; null when none was uploaded. */
  current(): CheckpointInfo | null {
    return this.store.current()?.info ?? null;
  }

  /** The current checkpoint and where its chunks are stored; null when the run has none. */
  head(): CheckpointHead | null {
    const current = this.store.current();
    if (!current) return null;
    return { checkpoint: current.info, uploadId: current.uploadId, chunks: this.store.chunkCount(current.uploadId) };
  }

  /** Chunk `index` of the checkpoint stored under `uploadId`; null once another replaced it. */
  chunk(uploadId: string, index: number): Uint8Array | null {
    return this.store.chunk(uploadId, index);
  }

  /**
   * Starts an upload, or settles it at once when its digest is the current checkpoint's: the same
   * bytes again only move what they cover (an idempotent retry; the body is not read).
   */
  begin(upload: CheckpointQuery, maxBytes: number): Result<CheckpointStart | Fenced> {
    const allowed = checkUploader(this.host, upload);
    if (!allowed.ok) return allowed;
    if (allowed.value) return ok(allowed.value);
    const current = this.store.current();
    if (current?.info.digest === upload.digest) {
      this.store.cover(upload.generation, upload.sourceSeq);
      return ok({ kind: "same", checkpoint: (this.store.current() ?? current).info });
    }
    const uploadId = crypto.randomUUID();
    this.store.begin(uploadId, maxBytes, this.host.now);
    return ok({ kind: "upload", uploadId });
  }

  /** The upload's next chunk, in order; never past its size bound. */
  addChunk(uploadId: string, index: number, body: Uint8Array): Result<null> {
    const upload = this.store.upload(uploadId);
    if (!upload) return fail("conflict", "this checkpoint upload was superseded by a newer one");
    if (index !== upload.chunks) return fail("invalid_request", `expected chunk ${upload.chunks}, got ${index}`);
    if (body.byteLength > CHECKPOINT_CHUNK_BYTES) {
      return fail("invalid_request", `checkpoint chunks are at most ${CHECKPOINT_CHUNK_BYTES} bytes`);
    }
    if (upload.bytes + body.byteLength > upload.maxBytes) {
      return fail("checkpoint_too_large", `checkpoints are limited to ${upload.maxBytes} bytes`);
    }
    this.store.addChunk(uploadId, index, body);
    return ok(null);
  }

  /** Makes a whole, verified upload the run's checkpoint (event `run.checkpoint`). */
  commit(uploadId: string, upload: CheckpointQuery): Result<CheckpointStored | Fenced> {
    const allowed = checkUploader(this.host, upload);
    if (!allowed.ok) return allowed;
    if (allowed.value) return ok(allowed.value);
    const staged = this.store.upload(uploadId);
    if (!staged) return fail("conflict", "this checkpoint upload was superseded by a newer one");
    const current = this.store.current();
    if (current?.info.digest === upload.digest) {
      // The same bytes landed meanwhile: this upload adds nothing.
      this.store.abort(uploadId);
      this.store.cover(upload.generation, upload.sourceSeq);
      return ok({ kind: "stored", created: false, checkpoint: (this.store.current() ?? current).info });
    }
    const { digest, generation, sourceSeq } = upload;
    const checkpoint = this.store.commit(
      uploadId,
      { digest, generation, sourceSeq, bytes: staged.bytes },
      this.host.now,
    );
    const run = this.host.mustLoad();
    this.host.control(run.epoch, ControlEventType.RUN_CHECKPOINT, {
      digest,
      generation,
      sourceSeq,
      bytes: staged.bytes,
    });
    return ok({ kind: "stored", created: true, checkpoint });
  }

  /** Drops an unfinished upload (refused, cut off or failed): the current checkpoint stays. */
  abort(uploadId: string): Result<null> {
    this.store.abort(uploadId);
    return ok(null);
  }
}
