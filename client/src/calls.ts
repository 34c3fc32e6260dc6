/**
 * A typed call for every route of the edge's OpenAPI document. Requests and answers are the
 * protocol's own types (src/protocol). Writes are retried only where the API makes a repeat
 * harmless: a command, cancel or recover with its `commandId`, a create with its `runId`.
 */
import type {
  ApprovalAccepted,
  ApprovalBody,
  ApprovalRecord,
  CancelAccepted,
  CancelBody,
  CheckpointStored,
  CommandAccepted,
  CommandBody,
  CreatedRun,
  CreatedWebhook,
  CreateRunBody,
  CreateWebhookBody,
  DeletedWebhook,
  DeliveryList,
  EventsPage,
  MintedPoolKey,
  MintedToken,
  PoolKeyBody,
  PoolKeyList,
  PoolList,
  PurgedRun,
  QueueDetail,
  QueueInfo,
  QueueList,
  QueueSettingsBody,
  RecoverAccepted,
  RecoverBody,
  RecoveryState,
  RerunBody,
  RevokedPoolKey,
  RevokedToken,
  RevokedTokens,
  RunRecord,
  RunReruns,
  RunStatus,
  RunsPage,
  TokenBody,
  UsageReport,
  WebhookDelivery,
  WebhookList,
} from "../../src/protocol/index.ts";
import type { z } from "zod";
import { type CallOptions, type ClientOptions, segment, Transport } from "./transport.ts";

export type { CallOptions, ClientOptions };

type Out<T extends z.ZodType> = z.output<T>;

export interface ListRunsOptions extends CallOptions {
  status?: RunStatus;
  agent?: string;
  tag?: string | readonly string[];
  /** ISO-8601 instants. */
  createdAfter?: string;
  createdBefore?: string;
  limit?: number;
  cursor?: string;
  /** `meta.<key>=<value>` filters. */
  meta?: Record<string, string>;
}

export interface EventsOptions extends CallOptions {
  after?: number;
  limit?: number;
}

export interface UsageOptions extends CallOptions {
  from?: string;
  to?: string;
  groupBy?: "day" | "agent" | "tag";
}

export interface CheckpointUpload {
  epoch: number;
  generation: number;
  sourceSeq: number;
  /** `sha256:<64 hex>` of `bytes`. */
  digest: string;
  bytes: Uint8Array;
}

const run = (runId: string, rest = "") => `/v1/runs/${segment(runId)}${rest}`;

export class EdgeClient {
  readonly transport: Transport;
  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
  }

  get url(): string {
    return this.transport.url;
  }

  private async get<T>(path: string, options: CallOptions = {}, query?: Record<string, unknown>): Promise<T> {
    const request = { method: "GET", path, idempotent: true, ...options, ...(query ? { query: query as never } : {}) };
    return (await this.transport.send<T>(request)).body;
  }

  private async write<T>(method: string, path: string, body: unknown, idempotent: boolean, options: CallOptions = {}) {
    return (await this.transport.send<T>({ method, path, body, idempotent, ...options })).body;
  }

  // --- runs ---
  /** Retried only when `body.runId` is set: then a repeat answers the same run (200). */
  createRun(body: CreateRunBody = {}, options?: CallOptions): Promise<CreatedRun> {
    return this.write("POST", "/v1/runs", body, body.runId !== undefined, options);
  }
  listRuns(options: ListRunsOptions = {}): Promise<RunsPage> {
    const { status, agent, tag, createdAfter, createdBefore, limit, cursor, meta, ...call } = options;
    const query: Record<string, unknown> = { status, agent, tag, createdAfter, createdBefore, limit, cursor };
    for (const [key, value] of Object.entries(meta ?? {})) query[`meta.${key}`] = value;
    return this.get("/v1/runs", call, query);
  }
  getRun(runId: string, options?: CallOptions): Promise<RunRecord> {
    return this.get(run(runId), options);
  }
  /** Deleting twice is refused the second time (410), so it is not retried. */
  purgeRun(runId: string, options?: CallOptions): Promise<PurgedRun> {
    return this.write("DELETE", run(runId), undefined, false, options);
  }
  /** Retried only when `body.runId` is set. */
  rerun(runId: string, body: RerunBody = {}, options?: CallOptions): Promise<CreatedRun> {
    return this.write("POST", run(runId, "/rerun"), body, body.runId !== undefined, options);
  }
  reruns(runId: string, options?: CallOptions): Promise<RunReruns> {
    return this.get(run(runId, "/reruns"), options);
  }

  // --- events ---
  events(runId: string, options: EventsOptions = {}): Promise<EventsPage> {
    const { after, limit, ...call } = options;
    return this.get(run(runId, "/events"), call, { after, limit });
  }
  /** Every event after `after`, page by page, until the log's current end. */
  async *allEvents(runId: string, options: EventsOptions = {}): AsyncGenerator<EventsPage["events"][number]> {
    let after = options.after ?? 0;
    for (;;) {
      const page = await this.events(runId, { ...options, after });
      yield* page.events;
      if (!page.hasMore) return;
      after = page.nextAfter;
    }
  }

  // --- operators ---
  command(runId: string, body: CommandBody, options?: CallOptions): Promise<CommandAccepted> {
    return this.write("POST", run(runId, "/commands"), body, true, options);
  }
  /** The same decision again is answered 200 (another one is refused), so it is retried. */
  approve(runId: string, requestId: string, body: ApprovalBody, options?: CallOptions): Promise<ApprovalAccepted> {
    return this.write("POST", run(runId, `/approvals/${segment(requestId)}`), body, true, options);
  }
  getApproval(runId: string, requestId: string, options?: CallOptions): Promise<ApprovalRecord> {
    return this.get(run(runId, `/approvals/${segment(requestId)}`), options);
  }
  /** Retried only with `body.commandId`. */
  cancel(runId: string, body: CancelBody = {}, options?: CallOptions): Promise<CancelAccepted> {
    return this.write("POST", run(runId, "/cancel"), body, body.commandId !== undefined, options);
  }

  // --- recovery ---
  recover(runId: string, body: RecoverBody, options?: CallOptions): Promise<RecoverAccepted> {
    return this.write("POST", run(runId, "/recover"), body, true, options);
  }
  recovery(runId: string, options?: CallOptions): Promise<RecoveryState> {
    return this.get(run(runId, "/recovery"), options);
  }
  /** The same digest again is answered 200 without a second store, so uploads retry. */
  async putCheckpoint(runId: string, upload: CheckpointUpload, options?: CallOptions): Promise<CheckpointStored> {
    const { bytes, ...query } = upload;
    const request = { method: "PUT", path: run(runId, "/checkpoint"), query, bytes, idempotent: true, ...options };
    return (await this.transport.send<CheckpointStored>(request)).body;
  }
  /** The checkpoint's bytes, as the raw Response (headers say its digest and what it covers). */
  async getCheckpoint(runId: string, options?: CallOptions): Promise<Response> {
    const request = { method: "GET", path: run(runId, "/checkpoint"), idempotent: true, raw: true, ...options };
    return (await this.transport.send<Response>(request)).body;
  }

  // --- tokens ---
  /** Each call mints a new token, so it is not retried. */
  mintToken(runId: string, body: TokenBody, options?: CallOptions): Promise<MintedToken> {
    return this.write("POST", run(runId, "/tokens"), body, false, options);
  }
  revokeTokens(runId: string, options?: CallOptions): Promise<RevokedTokens> {
    return this.write("DELETE", run(runId, "/tokens"), undefined, true, options);
  }
  revokeToken(runId: string, tokenId: string, options?: CallOptions): Promise<RevokedToken> {
    return this.write("DELETE", run(runId, `/tokens/${segment(tokenId)}`), undefined, false, options);
  }

  // --- pools and queues ---
  mintPoolKey(body: PoolKeyBody = {}, options?: CallOptions): Promise<MintedPoolKey> {
    return this.write("POST", "/v1/pool-keys", body, false, options);
  }
  poolKeys(options?: CallOptions): Promise<Out<typeof PoolKeyList>> {
    return this.get("/v1/pool-keys", options);
  }
  revokePoolKey(keyId: string, options?: CallOptions): Promise<RevokedPoolKey> {
    return this.write("DELETE", `/v1/pool-keys/${segment(keyId)}`, undefined, false, options);
  }
  pools(options?: CallOptions): Promise<Out<typeof PoolList>> {
    return this.get("/v1/pools", options);
  }
  queues(options?: CallOptions): Promise<Out<typeof QueueList>> {
    return this.get("/v1/queues", options);
  }
  queue(queue: string, options?: CallOptions): Promise<QueueDetail> {
    return this.get(`/v1/queues/${segment(queue)}`, options);
  }
  /** A PUT of settings: the same body twice leaves the same queue. */
  setQueue(queue: string, body: QueueSettingsBody, options?: CallOptions): Promise<QueueInfo> {
    return this.write("PUT", `/v1/queues/${segment(queue)}`, body, true, options);
  }

  // --- webhooks ---
  createWebhook(body: CreateWebhookBody, options?: CallOptions): Promise<CreatedWebhook> {
    return this.write("POST", "/v1/webhooks", body, false, options);
  }
  webhooks(options?: CallOptions): Promise<Out<typeof WebhookList>> {
    return this.get("/v1/webhooks", options);
  }
  deleteWebhook(webhookId: string, options?: CallOptions): Promise<Out<typeof DeletedWebhook>> {
    return this.write("DELETE", `/v1/webhooks/${segment(webhookId)}`, undefined, false, options);
  }
  deliveries(webhookId: string, options: CallOptions & { limit?: number } = {}): Promise<Out<typeof DeliveryList>> {
    const { limit, ...call } = options;
    return this.get(`/v1/webhooks/${segment(webhookId)}/deliveries`, call, { limit });
  }
  redeliver(webhookId: string, deliveryId: string, options?: CallOptions): Promise<WebhookDelivery> {
    const path = `/v1/webhooks/${segment(webhookId)}/deliveries/${segment(deliveryId)}/redeliver`;
    return this.write("POST", path, undefined, false, options);
  }
  pingWebhook(webhookId: string, options?: CallOptions): Promise<WebhookDelivery> {
    return this.write("POST", `/v1/webhooks/${segment(webhookId)}/ping`, undefined, false, options);
  }
  notifications(runId: string, options?: CallOptions): Promise<Out<typeof DeliveryList>> {
    return this.get(run(runId, "/notifications"), options);
  }

  // --- usage ---
  usage(options: UsageOptions = {}): Promise<UsageReport> {
    const { from, to, groupBy, ...call } = options;
    return this.get("/v1/usage", call, { from, to, groupBy });
  }

  // --- streams (bytes; their protocol is docs/STREAMS.md) ---
  /** A run's log as a Durable Stream: the raw Response of `GET|HEAD /v1/runs/:id/stream`. */
  async runStream(runId: string, options: CallOptions & { offset?: string; live?: string; head?: boolean } = {}) {
    const { offset, live, head, ...call } = options;
    const method = head ? "HEAD" : "GET";
    const request = { method, path: run(runId, "/stream"), query: { offset, live }, idempotent: true, raw: true };
    return (await this.transport.send<Response>({ ...request, ...call })).body;
  }
  /** The run as AG-UI's SSE encoding (`GET /v1/runs/:id/agui`), from `lastEventId` (a seq): the raw Response. */
  async agui(runId: string, options: CallOptions & { lastEventId?: number } = {}): Promise<Response> {
    const { lastEventId, ...call } = options;
    const headers: Record<string, string> = lastEventId === undefined ? {} : { "last-event-id": String(lastEventId) };
    const request = { method: "GET", path: run(runId, "/agui"), headers, idempotent: true, raw: true };
    return (await this.transport.send<Response>({ ...request, ...call })).body;
  }

  // --- reference ---
  openapi(options?: CallOptions): Promise<Record<string, unknown>> {
    return this.get("/openapi.json", options);
  }
  /** The JSON Schema of one socket's frames. */
  frameSchema(name: "runner-frames.json" | "viewer-frames.json" | "pool-frames.json", options?: CallOptions) {
    return this.get<Record<string, unknown>>(`/schemas/${segment(name)}`, options);
  }
}
