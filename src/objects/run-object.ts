import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import { type ReadRequest, type ReadResult, readOrWait, type StreamInfo } from "../log/reader.ts";
import { LogWaiters } from "../log/waiters.ts";
import {
  type ApprovalBody,
  type ApprovalRecord,
  type CancelBody,
  CLOSE_NORMAL,
  type CommandBody,
  type CommandRecord,
  type CheckpointQuery,
  type CreateRunBody,
  type EventsPage,
  fail,
  type Fenced,
  ok,
  type RecoverAccepted,
  type RecoverBody,
  type RecoveryState,
  type Result,
  type RunRecord,
  type RunStatus,
} from "../protocol/index.ts";
import { outboxDeliverer } from "../pools/deliver.ts";
import { failureResponse } from "../http/errors.ts";
import type { CheckpointHead, CheckpointStart, CheckpointStored } from "../run/checkpoints.ts";
import { controllerCommand } from "../run/controller.ts";
import { readRunLog, runStreamInfo } from "../run/log-stream.ts";
import { type TakeBack, takeBackAssignment } from "../run/pool-run.ts";
import { armAlarm } from "../run/deadlines.ts";
import { RunOperations } from "../run/operations.ts";
import { runLimits } from "../run/run-limits.ts";
import { approvalOf, eventsPage, recoveryState, replaySource, runnerStatus } from "../run/run-reads.ts";
import { runRecord } from "../run/run-record.ts";
import { DEFAULT_CANCEL_ID, type Submitted } from "../run/run-machine.ts";
import { tenantIndex } from "./tenant-index-shards.ts";
import { closeSocket } from "../run/sockets/run-sockets.ts";
import { handleSocketMessage } from "../run/sockets/socket-messages.ts";
import { readSocketRequest } from "../run/sockets/socket-request.ts";
import type { PresentedToken, TokenSpec } from "../run/token-store.ts";
import { attachViewer } from "../run/sockets/viewer-replay.ts";
import { applyMigrations } from "./migrations.ts";
import { RUN_MIGRATIONS } from "./run-schema.ts";

const RERUNS_KEY = "reruns";

/**
 * One run: its ordered event log, claim epoch, commands, approvals and deadlines, in SQLite.
 * This file is the object's surface: the RPC the routes call, the sockets it serves and its
 * alarm. How operations run is src/run/operations.ts; what they do, src/run/run-machine.ts.
 */
export class RunObject extends DurableObject<Env> {
  /** Stream readers waiting at the tail (long-poll, SSE); in memory only. */
  private readonly waiters = new LogWaiters();
  private readonly run: RunOperations;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    applyMigrations(ctx.storage, RUN_MIGRATIONS);
    this.run = new RunOperations(
      ctx,
      this.waiters,
      (tenant) => tenantIndex(env, tenant),
      outboxDeliverer(env),
      runLimits(env),
    );
    // The alarm is set after each commit, not in it: an operation that committed and then died
    // before setting it left a timer row with no alarm. Every wake sets it again from the rows.
    void ctx.blockConcurrencyWhile(() => armAlarm(ctx.storage));
  }

  // ---- RPC for the HTTP routes -----------------------------------------------------------

  create(tenant: string, runId: string, body: CreateRunBody): Promise<Result<{ created: boolean; run: RunRecord }>> {
    return this.run.operate((m) => {
      const result = m.create(tenant, runId, body);
      return result.ok ? ok({ created: result.value.created, run: runRecord(m) }) : result;
    });
  }

  async get(): Promise<Result<RunRecord>> {
    return this.run.read((m) => runRecord(m));
  }

  /**
   * The runs re-run from this one, oldest first. Kept in the object's key-value storage beside
   * the run's tables: a list that only grows, read by the reruns route, part of no transaction.
   */
  async reruns(): Promise<string[]> {
    return this.ctx.storage.kv.get<string[]>(RERUNS_KEY) ?? [];
  }

  async noteRerun(runId: string): Promise<void> {
    const known = await this.reruns();
    if (!known.includes(runId)) this.ctx.storage.kv.put(RERUNS_KEY, [...known, runId]);
  }

  async events(after: number, limit: number): Promise<Result<EventsPage>> {
    return this.run.read((m) => eventsPage(m, after, limit, this.run.limits.pageBytes));
  }

  /** `token`: the caller's, when a token (not an API key) made the request; checked with the write. */
  command(body: CommandBody, token: PresentedToken | null = null): Promise<Result<Submitted<CommandRecord | null>>> {
    return this.run.operateOnLiveAs(token, (m) => controllerCommand(m, body));
  }

  /** Cancels, and answers with the run as the cancel left it. */
  cancel(
    body: CancelBody,
    token: PresentedToken | null = null,
  ): Promise<Result<Submitted<CommandRecord | null> & { run: RunRecord }>> {
    return this.run.operateOnLiveAs(token, (m) => {
      const result = m.cancel(body.commandId ?? DEFAULT_CANCEL_ID, body.reason, body.generation);
      return result.ok ? ok({ ...result.value, run: runRecord(m) }) : result;
    });
  }

  approve(
    requestId: string,
    body: ApprovalBody,
    token: PresentedToken | null = null,
  ): Promise<Result<{ created: boolean; approval: ApprovalRecord }>> {
    return this.run.operateOnLiveAs(token, (m) => m.approvals.resolve(requestId, body));
  }

  /** One approval with its full request (the run record lists summaries). */
  async approval(requestId: string): Promise<Result<ApprovalRecord>> {
    const found = this.run.read((m) => approvalOf(m, requestId));
    if (!found.ok) return found;
    return found.value ? ok(found.value) : fail("not_found", `no approval request ${requestId} on this run`);
  }

  purge(): Promise<Result<{ status: RunStatus }>> {
    return this.run.operateOnLive((m) => m.purge());
  }

  /** An operator's decision for a recovering run (src/run/recovery-decision.ts). */
  recover(body: RecoverBody, token: PresentedToken | null = null): Promise<Result<RecoverAccepted>> {
    return this.run.operateOnLiveAs(token, (m) => {
      const result = m.recoveryDecisions.decide(body);
      return result.ok ? ok({ ...result.value, run: runRecord(m) }) : result;
    });
  }

  /** What `runner-bridge resume` reads before it claims. */
  async recovery(): Promise<Result<RecoveryState>> {
    return this.run.read((m) => recoveryState(m));
  }

  // Checkpoint uploads arrive as chunks (src/routes/checkpoint.ts streams the body here): begin,
  // chunk…, commit, or abort when the upload is refused or cut off. Downloads read chunk by chunk.

  checkpointBegin(upload: CheckpointQuery, maxBytes: number): Promise<Result<CheckpointStart | Fenced>> {
    return this.run.operateOnLive((m) => m.checkpoints.begin(upload, maxBytes));
  }

  checkpointChunk(uploadId: string, index: number, body: Uint8Array): Promise<Result<null>> {
    return this.run.operateOnLive((m) => m.checkpoints.addChunk(uploadId, index, body));
  }

  checkpointCommit(uploadId: string, upload: CheckpointQuery): Promise<Result<CheckpointStored | Fenced>> {
    return this.run.operateOnLive((m) => m.checkpoints.commit(uploadId, upload));
  }

  checkpointAbort(uploadId: string): Promise<Result<null>> {
    return this.run.operateOnLive((m) => m.checkpoints.abort(uploadId));
  }

  async checkpointHead(): Promise<Result<CheckpointHead>> {
    const found = this.run.read((m) => m.checkpoints.head());
    if (!found.ok) return found;
    return found.value ? ok(found.value) : fail("no_checkpoint", "the run has no checkpoint");
  }

  /** Chunk `index` of the checkpoint stored under `uploadId`; null once another replaced it. */
  async checkpointChunkAt(uploadId: string, index: number): Promise<Result<Uint8Array | null>> {
    return this.run.read((m) => m.checkpoints.chunk(uploadId, index));
  }

  /** What a runner token may learn before attaching: enough to decide, never to wait. */
  async runnerStatus(): Promise<Result<{ runId: string; status: RunStatus; epoch: number }>> {
    return this.run.read((m) => runnerStatus(m));
  }

  /** The log as a Durable Streams JSON-mode stream: one message per event, closed once terminal. */
  async readLog(request: ReadRequest): Promise<ReadResult> {
    const read = (offset: ReadRequest["offset"]) => readRunLog(this.ctx.storage.sql, offset, this.run.limits.pageBytes);
    return readOrWait(read, request.offset, this.waiters, request.waitMs);
  }

  async streamHead(): Promise<StreamInfo | null> {
    return runStreamInfo(this.ctx.storage.sql);
  }

  // ---- tokens: the run's record of what it minted (src/run/token-store.ts) ----------------------

  /** Records new tokens of the run and answers their ids, in order; the worker signs them. */
  issueTokens(specs: TokenSpec[]): Promise<Result<string[]>> {
    return this.run.operateOnLive((m) => m.tokens.issue(specs));
  }

  /** Whether a token may still act on the run (checked on every request a token makes). */
  async checkToken(token: PresentedToken): Promise<Result<null>> {
    return this.run.checkToken(token);
  }

  /** Revokes one token, and closes the sockets it opened. */
  async revokeToken(tokenId: string): Promise<Result<{ revokedAt: number }>> {
    const result = await this.run.operateOnLive((m) => m.tokens.revoke(tokenId));
    if (result.ok) this.run.sockets.closeRevoked({ tokenId });
    return result;
  }

  /** Revokes every token of the run, and closes every socket a token opened. */
  async revokeAllTokens(): Promise<Result<{ revoked: number; revokedAt: number }>> {
    const result = await this.run.operateOnLive((m) => ok({ revoked: m.tokens.revokeAll(), revokedAt: m.now }));
    if (result.ok) this.run.sockets.closeRevoked("all");
    return result;
  }

  /**
   * A dispatcher takes back a lapsed assignment (src/run/pool-run.ts): kept if the run was claimed,
   * otherwise its runner token is revoked with the decision and the sockets it opened are closed.
   */
  async takeBackAssignment(tokenId: string | null): Promise<Result<TakeBack>> {
    const result = await this.run.operateOnLive((m) => ok(takeBackAssignment(m, tokenId)));
    if (result.ok && result.value === "taken_back" && tokenId !== null) this.run.sockets.closeRevoked({ tokenId });
    return result;
  }

  // ---- WebSockets ----------------------------------------------------------------------------

  /** Opens a runner or viewer socket; the worker has checked the credential, the run checks its token again. */
  override async fetch(request: Request): Promise<Response> {
    const found = this.run.read((m) => replaySource(m));
    if (!found.ok) return failureResponse(found);
    const socket = readSocketRequest(request);
    if (socket.token) {
      const valid = this.run.checkToken(socket.token);
      if (!valid.ok) return failureResponse(valid);
    }
    const { sockets, limits } = this.run;
    if (socket.role === "viewer" && sockets.viewerCount() >= limits.viewers) {
      const message = `the run has ${limits.viewers} viewers open (VIEWERS_PER_RUN_MAX); try again later`;
      return failureResponse(fail("too_many_viewers", message));
    }
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    if (socket.role === "runner") sockets.acceptRunner(server, socket.token);
    else {
      // The replay goes on after the upgrade is answered, a frame at a time (viewer-replay.ts).
      const replay = attachViewer(this.run, found.value, server, socket).catch((error: unknown) => {
        console.error("viewer replay failed", error);
        sockets.forget(server);
        closeSocket(server, 1011, "replay failed; reconnect from your last seq");
      });
      this.ctx.waitUntil(replay);
    }
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await handleSocketMessage(this.run, ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // A runner that drops keeps its lease until it expires, so a brief network cut costs nothing.
    this.run.sockets.forget(ws);
    closeSocket(ws, code === 1005 || code === 1006 ? CLOSE_NORMAL : code, reason);
  }

  // ---- alarm -----------------------------------------------------------------------------------

  override async alarm(): Promise<void> {
    await this.run.fireAlarm();
  }
}
