import { AguiEventType } from "../../../src/protocol/index.ts";
import { AGENT_SESSION } from "../adapters/agui/events.ts";
import type { Logger } from "../logger.ts";
import type { RunSpec } from "../rundir.ts";
import { digestOf, encodeArchive } from "./archive.ts";
import { type CheckpointUpload, EdgeRefusal, type EdgeTarget, putCheckpoint } from "./edge-api.ts";
import { collectSession, type SessionPlaces } from "./files.ts";

/** The checkpointer of a bridge session, when it has one (`checkpoint` set); knows a resumed session at once. */
export function sessionCheckpointer(
  o: EdgeTarget & { log: Logger; spec: RunSpec; checkpoint?: { places: SessionPlaces; intervalMs: number } },
  host: CheckpointHost,
): Checkpointer | null {
  if (!o.checkpoint) return null;
  const target = { edge: o.edge, runId: o.runId, token: o.token };
  const checkpointer = new Checkpointer(
    { ...o.checkpoint, log: o.log, upload: (up) => putCheckpoint(target, up) },
    host,
  );
  if (o.spec.resume) checkpointer.session(o.spec.resume.provider, o.spec.resume.id);
  return checkpointer;
}

/** What the uploader needs to know of the session it serves. */
export interface CheckpointHost {
  /** Journal lines read so far: what a snapshot taken now covers at most. */
  linesRead(): number;
  /** Highest sourceSeq the edge acknowledged in the claimed generation. */
  acked(): number;
  /** The current claim, or null while not claimed. */
  claim(): { epoch: number; generation: number } | null;
}

export interface CheckpointerOptions {
  places: SessionPlaces;
  /** Timer period; a snapshot goes up only when something changed. */
  intervalMs: number;
  log: Logger;
  upload(up: CheckpointUpload): Promise<unknown>;
  /** First retry delay after a failure in transit (doubling); default 250 ms. */
  retryBaseMs?: number;
}

interface Snapshot {
  bytes: Buffer;
  digest: string;
  /** The journal lines read before the files were: the events the snapshot is sure to reflect. */
  covers: number;
  /** Uploads of it that failed in transit so far. */
  failures: number;
}

/**
 * Keeps the run's checkpoint on the edge: the provider's session files, packed, after each turn
 * and on a timer. A snapshot goes up only once the edge acknowledged every event it covers (so the
 * edge never holds a checkpoint ahead of its log), only when its digest changed or it covers more
 * events than the last one, one upload at a time, the newest snapshot replacing a waiting one.
 * Failures are logged and never end the run.
 */
export class Checkpointer {
  private readonly options: CheckpointerOptions;
  private readonly host: CheckpointHost;
  private native: { provider: string; id: string } | null = null;
  private wanted = false;
  private pending: Snapshot | null = null;
  /** The last snapshot the edge stored or refused: the same one is not offered again. */
  private lastSent: { digest: string; covers: number } | null = null;
  private inFlight = false;
  /** No upload before this time (backing off after a failure in transit). */
  private retryAt = 0;
  private wake: ReturnType<typeof setTimeout> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private stopped = false;

  constructor(options: CheckpointerOptions, host: CheckpointHost) {
    this.options = options;
    this.host = host;
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => {
      this.wanted = true;
      this.tick();
    }, this.options.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.wake) clearTimeout(this.wake);
    this.timer = null;
  }

  /** Each event read from the journal: the session the files are looked up by, and turn ends. */
  observe(type: string, data: unknown): void {
    if (type === AGENT_SESSION) {
      const { provider, id } = (data ?? {}) as { provider?: unknown; id?: unknown };
      if (typeof provider === "string" && typeof id === "string") this.session(provider, id);
    } else if (type === AguiEventType.RUN_FINISHED || type === AguiEventType.RUN_ERROR) {
      this.turnEnded();
    }
  }

  /** The agent reported its native session: what the files are looked up by. */
  session(provider: string, id: string): void {
    this.native = { provider, id };
  }

  /** A turn ended: a snapshot is due. */
  turnEnded(): void {
    this.wanted = true;
  }

  /** Takes a due snapshot and uploads whatever is ready (called by the session's pump). */
  tick(): void {
    if (this.stopped) return;
    if (this.wanted && this.native) {
      this.wanted = false;
      this.snapshot(this.native);
    }
    void this.flush();
  }

  private snapshot(native: { provider: string; id: string }): void {
    const covers = this.host.linesRead();
    let bytes: Buffer;
    try {
      const archive = collectSession(this.options.places, native.provider, native.id);
      if (!archive) return;
      bytes = encodeArchive(archive);
    } catch (err) {
      this.options.log.warn(`checkpoint: reading the session files failed: ${(err as Error).message}`);
      return;
    }
    const digest = digestOf(bytes);
    const last = this.pending ?? this.lastSent;
    if (last && last.digest === digest && last.covers >= covers) return;
    this.pending = { bytes, digest, covers, failures: 0 };
  }

  private async flush(): Promise<void> {
    const snapshot = this.pending;
    const claim = this.host.claim();
    if (this.inFlight || !snapshot || !claim || this.host.acked() < snapshot.covers) return;
    if (Date.now() < this.retryAt) return this.wakeAt(this.retryAt);
    this.inFlight = true;
    this.pending = null;
    const { epoch, generation } = claim;
    try {
      await this.options.upload({
        epoch,
        generation,
        sourceSeq: snapshot.covers,
        digest: snapshot.digest,
        bytes: snapshot.bytes,
      });
      this.lastSent = { digest: snapshot.digest, covers: snapshot.covers };
      this.options.log.info(
        `checkpoint ${snapshot.digest.slice(0, 19)}… (${snapshot.bytes.length} bytes) covers sourceSeq ${snapshot.covers}`,
      );
    } catch (err) {
      // A refusal is final for this snapshot; one lost in transit (or a 5xx) is retried a few
      // times with backoff, after which the next turn or timer tick offers a fresh one.
      const transient = !(err instanceof EdgeRefusal) || err.isTransient;
      const retry = transient && snapshot.failures + 1 < MAX_TRANSIENT_FAILURES;
      // A refusal is logged with its status and code, which say more than the message alone.
      const said = err instanceof EdgeRefusal && err.status !== undefined ? `${err.status} ${err.code}: ` : "";
      this.options.log.warn(
        `checkpoint upload failed${retry ? " (will retry)" : ""}: ${said}${(err as Error).message}`,
      );
      if (retry) {
        this.pending ??= { ...snapshot, failures: snapshot.failures + 1 };
        this.retryAt = Date.now() + (this.options.retryBaseMs ?? RETRY_BASE_MS) * 2 ** snapshot.failures;
      } else if (!transient) {
        this.lastSent = { digest: snapshot.digest, covers: snapshot.covers };
      }
    } finally {
      this.inFlight = false;
    }
    if (this.pending) this.wakeAt(this.retryAt);
  }

  /** One tick at `at` (a timer may fire a little early: the tick then asks for the next one). */
  private wakeAt(at: number): void {
    if (this.wake || this.stopped) return;
    this.wake = setTimeout(
      () => {
        this.wake = null;
        this.tick();
      },
      Math.max(0, at - Date.now()) + 1,
    );
    this.wake.unref?.();
  }
}

/** Backoff of an upload that failed in transit: 250 ms, doubling, at most 5 attempts per snapshot. */
const RETRY_BASE_MS = 250;
const MAX_TRANSIENT_FAILURES = 5;
