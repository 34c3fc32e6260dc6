import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import {
  ok,
  type Placement,
  POOL_CLOSE_REVOKED,
  type PoolHostInfo,
  type QueueDetail,
  type QueueInfo,
  type QueueSettingsBody,
  type Result,
} from "../protocol/index.ts";
import type { PoolNotice } from "../run/pool-run.ts";
import { DispatchCore } from "../pools/dispatch.ts";
import { closeHost, sendFrame } from "../pools/hosts.ts";
import { handleHostMessage } from "../pools/host-frames.ts";
import { defaultSettings, type QueueSettings } from "../pools/dispatch-store.ts";
import { applyNotice } from "../pools/notices.ts";
import { hostsOf, placementOf, poolHostsOf, queueDetailOf, queueInfoOf } from "../pools/views.ts";
import { DISPATCHER_MIGRATIONS } from "./dispatcher-schema.ts";
import { applyMigrations } from "./migrations.ts";

/** What the worker tells a dispatcher about a pool socket it hands over (it checked the pool key). */
export const POOL_SOCKET_HEADERS = { tenant: "x-pool-tenant", queue: "x-pool-queue", keyId: "x-pool-key" } as const;

/**
 * One per (tenant, queue): the queue's pool runs in SQLite, its pool hosts as hibernatable
 * WebSockets, assignment leases as its alarm. This file is the object's surface; the rules are in
 * src/pools/ (dispatch.ts, assign.ts, notices.ts, host-frames.ts) and docs/PROTOCOL.md, "Pools".
 */
export class Dispatcher extends DurableObject<Env> {
  private readonly core: DispatchCore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    applyMigrations(ctx.storage, DISPATCHER_MIGRATIONS);
    this.core = new DispatchCore(ctx, env);
    void ctx.blockConcurrencyWhile(() => this.core.wake());
  }

  // ---- RPC -------------------------------------------------------------------------------------

  /** A run's notification from its outbox; answered once committed, so the run may delete it. */
  async notice(notice: PoolNotice, seq: number, key: string): Promise<Result<{ applied: boolean }>> {
    return ok(
      await this.core.transact((store, out, now) => {
        store.ensureSettings(notice.tenant, notice.queue);
        const { applied, revocations } = applyNotice(store, notice, seq, key, now);
        out.revocations.push(...revocations);
        return { applied };
      }),
    );
  }

  /** Where the run stands; `ended`: its record says it finished. */
  async placement(tenant: string, queue: string, runId: string, ended: boolean): Promise<Placement> {
    const store = this.core.store();
    return placementOf(store, this.settings(tenant, queue), this.core.hosts.connected(), runId, ended);
  }

  /** The host holding each of these runs, or the last that did (GET /v1/runs); null for one no host took. */
  async poolHosts(runIds: string[]): Promise<Record<string, string | null>> {
    return poolHostsOf(this.core.store(), runIds);
  }

  async queueInfo(tenant: string, queue: string): Promise<QueueInfo> {
    return queueInfoOf(this.core.store(), this.settings(tenant, queue), this.core.hosts.connected());
  }

  async queueDetail(tenant: string, queue: string): Promise<QueueDetail> {
    return queueDetailOf(this.core.store(), this.settings(tenant, queue), this.core.hosts.connected());
  }

  /** Changes the queue's limits; raising one assigns at once what it now allows. */
  async configure(tenant: string, queue: string, body: QueueSettingsBody): Promise<QueueInfo> {
    await this.core.transact((store) => {
      const settings = store.ensureSettings(tenant, queue);
      store.updateSettings(body.maxConcurrent, body.assignMs ?? settings.assignMs);
    });
    return this.queueInfo(tenant, queue);
  }

  async hostList(tenant: string, queue: string): Promise<PoolHostInfo[]> {
    return hostsOf(this.core.store(), this.settings(tenant, queue), this.core.hosts.connected());
  }

  /** Closes the open sockets of a revoked pool key; answers how many there were. */
  async closeKey(keyId: string): Promise<number> {
    const sockets = this.core.hosts.ofKey(keyId);
    for (const ws of sockets) closeHost(ws, POOL_CLOSE_REVOKED, "pool key revoked");
    return sockets.length;
  }

  /** The queue's settings; a queue nobody used yet reads as the defaults, and nothing is stored. */
  private settings(tenant: string, queue: string): QueueSettings {
    return this.core.store().settings() ?? defaultSettings(tenant, queue);
  }

  // ---- the pool socket -------------------------------------------------------------------------

  override async fetch(request: Request): Promise<Response> {
    const tenant = request.headers.get(POOL_SOCKET_HEADERS.tenant) ?? "";
    const queue = request.headers.get(POOL_SOCKET_HEADERS.queue) ?? "";
    const keyId = request.headers.get(POOL_SOCKET_HEADERS.keyId) ?? "";
    this.ctx.storage.transactionSync(() => this.core.store().ensureSettings(tenant, queue));
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.core.hosts.accept(server, keyId, Date.now());
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    try {
      await handleHostMessage(this.core, ws, message);
    } catch (error) {
      console.error("pool frame failed", error);
      sendFrame(ws, { type: "error", code: "internal", message: "the frame could not be handled; nothing changed" });
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // A host that leaves is not judged: each run it held goes on through its own lease.
    closeHost(ws, code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  override async alarm(): Promise<void> {
    await this.core.alarm();
  }
}
