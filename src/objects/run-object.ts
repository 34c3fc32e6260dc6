import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import {
  type ApprovalBody,
  type CancelBody,
  type CommandBody,
  type CreateRunBody,
  type Failure,
  fail,
  isFailure,
  isTerminal,
  MAX_FRAME_BYTES,
  type RunRecord,
  RunnerFrame,
  ViewerFrame,
  errorBody,
  ERROR_STATUS,
  CLOSE_NORMAL,
  type RunEvent,
} from "../protocol/index.ts";
import { type ReadRequest, type ReadResult, readOrWait, readPage, type StreamInfo } from "../log/reader.ts";
import { encodeOffset, type OffsetRef } from "../log/offsets.ts";
import { LogWaiters } from "../log/waiters.ts";
import { controllerCommand } from "../run/controller.ts";
import type { RunHost } from "../run/host.ts";
import { fireDueTimers } from "../run/run-alarms.ts";
import { DEFAULT_CANCEL_ID, RunMachine } from "../run/run-machine.ts";
import { handleRunnerFrame } from "../run/runner-session.ts";
import { type RunRow, RunStore } from "../run/store.ts";
import { Timers } from "../run/timers.ts";
import { attachmentOf, closeSocket, RunSockets, send } from "../run/sockets.ts";
import { handleViewerFrame } from "../run/viewer-session.ts";
import { renderBody } from "../streams/content.ts";
import { RUN_SCHEMA } from "./run-schema.ts";
import { tenantIndexStub } from "./stubs.ts";

/** Carries a Failure out of a transaction so the transaction rolls back. */
class Refused extends Error {
  readonly failure: Failure;

  constructor(failure: Failure) {
    super(failure.message);
    this.failure = failure;
  }
}

const REPLAY_PAGE = 500;

/** One run: its ordered event log, claim epoch, commands, approvals and deadlines. */
export class RunObject extends DurableObject<Env> {
  private readonly sockets: RunSockets;
  /** What frame handlers get; kept off the class so RPC callers cannot reach `operate`. */
  private readonly host: RunHost;
  /** Stream readers waiting at the tail (long-poll, SSE); in memory only. */
  private readonly waiters = new LogWaiters();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sockets = new RunSockets(ctx);
    this.host = { sockets: this.sockets, operate: (step) => this.operate(step) };
    ctx.storage.sql.exec(RUN_SCHEMA);
  }

  private async operate<T>(step: (machine: RunMachine) => T | Failure): Promise<T | Failure> {
    const sql = this.ctx.storage.sql;
    const machine = new RunMachine(sql, Date.now(), () => this.runnerConnected());
    let result: T;
    try {
      result = this.ctx.storage.transactionSync(() => {
        const value = step(machine);
        if (isFailure(value)) throw new Refused(value);
        return value;
      });
    } catch (error) {
      if (error instanceof Refused) return error.failure;
      throw error;
    }
    const run = machine.run();
    if (run) this.sockets.apply(machine.effects, run.epoch, run.status);
    if (machine.effects.appended.length > 0 || machine.effects.statusChanged) this.waiters.notify();
    await this.scheduleAlarm(machine.timers);
    if (machine.effects.statusChanged) await this.syncIndex();
    return result;
  }

  // ---- RPC for the HTTP routes -----------------------------------------------------------

  create(tenant: string, runId: string, body: CreateRunBody): Promise<{ created: boolean; run: RunRecord } | Failure> {
    return this.operate((m) => {
      const result = m.create(tenant, runId, body);
      if (isFailure(result)) return result;
      return { created: result.created, run: m.record() as RunRecord };
    });
  }

  async get(): Promise<RunRecord | Failure> {
    return this.read((m) => m.record() as RunRecord);
  }

  async events(
    after: number,
    limit: number,
  ): Promise<{ events: RunEvent[]; nextAfter: number; hasMore: boolean; status: string } | Failure> {
    return this.read((m) => {
      const page = m.store.eventsAfter(after, limit + 1);
      const hasMore = page.length > limit;
      const events = hasMore ? page.slice(0, limit) : page;
      const last = events[events.length - 1];
      return { events, nextAfter: last ? last.seq : after, hasMore, status: m.mustLoad().status };
    });
  }

  command(body: CommandBody) {
    return this.operateOnLive((m) => controllerCommand(m, body));
  }

  /** Cancels, and answers with the run as the cancel left it. */
  cancel(body: CancelBody) {
    return this.operateOnLive((m) => {
      const result = m.cancel(body.commandId ?? DEFAULT_CANCEL_ID, body.reason);
      return isFailure(result) ? result : { ...result, run: m.record() as RunRecord };
    });
  }

  approve(requestId: string, body: ApprovalBody) {
    return this.operateOnLive((m) => m.resolveApproval(requestId, body));
  }

  async purge(): Promise<{ status: string } | Failure> {
    const result = await this.operateOnLive((m) => {
      const purged = m.purge();
      return isFailure(purged) ? purged : { status: m.mustLoad().status };
    });
    return result;
  }

  /** What a runner token may learn before attaching: enough to decide, never to wait. */
  async runnerStatus(): Promise<{ runId: string; status: string; epoch: number } | Failure> {
    return this.read((m) => {
      const run = m.mustLoad();
      return { runId: run.runId, status: run.status, epoch: run.epoch };
    });
  }

  /** The log as a Durable Streams JSON-mode stream: one message per event, closed once terminal. */
  async readLog(request: ReadRequest): Promise<ReadResult> {
    return readOrWait((offset) => this.readLogNow(offset), request.offset, this.waiters, request.waitMs);
  }

  async streamHead(): Promise<StreamInfo | null> {
    const store = new RunStore(this.ctx.storage.sql);
    const run = store.load();
    return run && run.purgedAt === null ? streamInfo(run.runId, run.createdAt, store) : null;
  }

  private readLogNow(offset: OffsetRef): ReadResult {
    const store = new RunStore(this.ctx.storage.sql);
    const run = store.load();
    if (!run || run.purgedAt !== null) return { kind: "not_found" };
    const page = readPage(store.log, offset, (bodies) => renderBody(bodies, true));
    if (page.kind !== "read") return page;
    return { ...page, info: streamInfo(run.runId, run.createdAt, store) };
  }

  // ---- WebSockets ----------------------------------------------------------------------------

  override async fetch(request: Request): Promise<Response> {
    const role = request.headers.get("x-socket-role");
    const found = await this.read((m) => m.mustLoad());
    if (isFailure(found)) return failureResponse(found);
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    if (role === "runner") {
      this.ctx.acceptWebSocket(server, ["runner"]);
      server.serializeAttachment({ role: "runner", epoch: 0, runnerId: null });
    } else {
      const interact = request.headers.get("x-viewer-interact") === "true";
      const after = Number(request.headers.get("x-viewer-after") ?? "0");
      this.ctx.acceptWebSocket(server, ["viewer"]);
      server.serializeAttachment({ role: "viewer", interact });
      this.replay(server, after);
    }
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * Sends every event after `after`, then the status. This runs without yielding, so no append
   * can land between the replay and the live feed: each event reaches the viewer exactly once.
   */
  private replay(ws: WebSocket, after: number): void {
    const store = new RunStore(this.ctx.storage.sql);
    let cursor = after;
    for (;;) {
      const events = store.eventsAfter(cursor, REPLAY_PAGE);
      if (events.length === 0) break;
      send(ws, { type: "events", events });
      cursor = (events[events.length - 1] as RunEvent).seq;
      if (events.length < REPLAY_PAGE) break;
    }
    const status = (store.load() as RunRow).status;
    send(ws, { type: "status", status });
    if (isTerminal(status)) {
      send(ws, { type: "end", status });
      closeSocket(ws, CLOSE_NORMAL, "run ended");
    }
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const size = typeof message === "string" ? new TextEncoder().encode(message).byteLength : message.byteLength;
    if (size > MAX_FRAME_BYTES) {
      return send(ws, {
        type: "error",
        code: "payload_too_large",
        message: `frames are limited to ${MAX_FRAME_BYTES} bytes`,
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
    } catch {
      return send(ws, { type: "error", code: "invalid_json", message: "a frame must be one JSON object" });
    }
    const attachment = attachmentOf(ws);
    if (attachment?.role === "runner") {
      const frame = RunnerFrame.safeParse(json);
      if (!frame.success)
        return send(ws, {
          type: "error",
          code: "invalid_frame",
          message: frame.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
        });
      return handleRunnerFrame(this.host, ws, frame.data);
    }
    const frame = ViewerFrame.safeParse(json);
    if (!frame.success)
      return send(ws, {
        type: "error",
        code: "invalid_frame",
        message: frame.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
      });
    return handleViewerFrame(this.host, ws, frame.data);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // A runner that drops keeps its lease until it expires, so a brief network cut costs nothing.
    closeSocket(ws, code === 1005 || code === 1006 ? CLOSE_NORMAL : code, reason);
  }

  // ---- alarms ----------------------------------------------------------------------------------

  override async alarm(): Promise<void> {
    let indexSync = false;
    const result = await this.operate((m) => {
      indexSync = fireDueTimers(m).indexSync;
      return true;
    });
    if (!isFailure(result) && indexSync) await this.syncIndex();
  }

  private async scheduleAlarm(timers: Timers): Promise<void> {
    const next = timers.earliest();
    if (next === null) await this.ctx.storage.deleteAlarm();
    else if ((await this.ctx.storage.getAlarm()) !== next) await this.ctx.storage.setAlarm(next);
  }

  /** Brings the tenant's run list up to date; a failure is retried by the alarm. */
  private async syncIndex(): Promise<void> {
    const run = new RunStore(this.ctx.storage.sql).load();
    if (!run) return;
    const index = tenantIndexStub(this.env, run.tenant);
    try {
      if (run.purgedAt !== null) await index.remove(run.runId);
      else await index.upsert(run.runId, run.status, run.createdAt);
    } catch {
      const timers = new Timers(this.ctx.storage.sql);
      timers.set("index_sync", Date.now() + 5_000);
      await this.scheduleAlarm(timers);
    }
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private runnerConnected(): boolean {
    return this.sockets.currentRunner(new RunStore(this.ctx.storage.sql).epoch()) !== null;
  }

  /** A read that answers 404 for no run and 410 for a purged one. */
  private async read<T>(step: (machine: RunMachine) => T): Promise<T | Failure> {
    const machine = new RunMachine(this.ctx.storage.sql, Date.now(), () => this.runnerConnected());
    const run = machine.run();
    if (!run) return fail("not_found", "no such run");
    if (run.purgedAt !== null) {
      return fail("gone", "the run was purged", {
        status: run.status,
        finishedAt: new Date(run.finishedAt ?? run.purgedAt).toISOString(),
      });
    }
    return step(machine);
  }

  private async operateOnLive<T>(step: (machine: RunMachine) => T | Failure): Promise<T | Failure> {
    const exists = await this.read(() => true);
    if (isFailure(exists)) return exists;
    return this.operate(step);
  }
}

function streamInfo(runId: string, createdAt: number, store: RunStore): StreamInfo {
  const state = store.log.mustState();
  return {
    // A run id is never reused (a purged id stays a tombstone), so it names the stream for good.
    streamId: `${runId}.${createdAt}`,
    contentType: "application/json",
    tail: encodeOffset(state.tail),
    closed: state.closed,
    ttlSeconds: null,
    expiresAt: null,
  };
}

function failureResponse(failure: Failure): Response {
  const body = { ...errorBody(failure.code, failure.message), ...(failure.details ?? {}) };
  return Response.json(body, { status: ERROR_STATUS[failure.code] });
}
