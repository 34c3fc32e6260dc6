import { newPoolKey } from "../auth/pool-keys.ts";
import { dispatcherStub, tenantPoolsStub } from "../objects/stubs.ts";
import {
  MintedPoolKey,
  PoolKeyBody,
  PoolKeyList,
  PoolKeyParams,
  PoolList,
  QueueDetail,
  QueueInfo,
  QueueList,
  QueueParams,
  QueueSettingsBody,
  RevokedPoolKey,
} from "../protocol/index.ts";
import { API_KEY } from "./access.ts";
import { apiRoute, apiRouter, jsonRequest, jsonResponse } from "./api-route.ts";
import { useQueue } from "./pool-queues.ts";
import { unwrap } from "./respond.ts";

/** Runner pools by API key: pool keys, queues and the connected hosts (docs/PROTOCOL.md, "Pools"). */
export const pools = apiRouter();
const tags = ["pools"];
const bodyRefusals = ["invalid_json", "invalid_body", "payload_too_large"] as const;

apiRoute(
  pools,
  {
    method: "post",
    path: "/pool-keys",
    tags,
    summary: "Mint a pool key",
    description:
      "The key is in this answer only. It opens the pool socket (`GET /v1/pools/connect`) for this tenant and nothing else.",
    access: API_KEY,
    request: { body: jsonRequest(PoolKeyBody, false) },
    responses: { 201: jsonResponse(MintedPoolKey, "Minted") },
    refusals: bodyRefusals,
  },
  async (c) => {
    const { key, id, secretHash } = newPoolKey(c.var.tenant);
    const minted = await tenantPoolsStub(c.env, c.var.tenant).mintKey(
      id,
      secretHash,
      c.req.valid("json").label ?? null,
    );
    return c.json({ ...minted, key }, 201);
  },
);

apiRoute(
  pools,
  {
    method: "get",
    path: "/pool-keys",
    tags,
    summary: "List the tenant's live pool keys (never the keys themselves)",
    access: API_KEY,
    responses: { 200: jsonResponse(PoolKeyList, "The keys") },
    refusals: [],
  },
  async (c) => c.json({ keys: await tenantPoolsStub(c.env, c.var.tenant).listKeys() }, 200),
);

apiRoute(
  pools,
  {
    method: "delete",
    path: "/pool-keys/{keyId}",
    tags,
    summary: "Revoke a pool key and close its open pool sockets",
    description:
      "The key opens no socket from now on. Runs its hosts hold go on through their own leases. A repeat answers 200 with the first revocation's time.",
    access: API_KEY,
    request: { params: PoolKeyParams },
    responses: { 200: jsonResponse(RevokedPoolKey, "Revoked") },
    refusals: ["invalid_query", "not_found"],
  },
  async (c) => {
    const tenant = c.var.tenant;
    const { keyId } = c.req.valid("param");
    const revoked = unwrap(await tenantPoolsStub(c.env, tenant).revokeKey(keyId));
    const queues = await tenantPoolsStub(c.env, tenant).queues();
    const closed = await Promise.all(queues.map((queue) => dispatcherStub(c.env, tenant, queue).closeKey(keyId)));
    const revokedAt = new Date(revoked.revokedAt).toISOString();
    return c.json({ id: keyId, revokedAt, closedSockets: closed.reduce((sum, n) => sum + n, 0) }, 200);
  },
);

apiRoute(
  pools,
  {
    method: "get",
    path: "/pools",
    tags,
    summary: "The tenant's connected pool hosts: profiles, slots and the runs they hold",
    access: API_KEY,
    responses: { 200: jsonResponse(PoolList, "Connected hosts, by queue then hostId") },
    refusals: [],
  },
  async (c) => {
    const tenant = c.var.tenant;
    const queues = await tenantPoolsStub(c.env, tenant).queues();
    const hosts = await Promise.all(
      queues.map((queue) => dispatcherStub(c.env, tenant, queue).hostList(tenant, queue)),
    );
    return c.json({ hosts: hosts.flat() }, 200);
  },
);

apiRoute(
  pools,
  {
    method: "get",
    path: "/queues",
    tags,
    summary: "The tenant's queues: settings, depth, running, hosts and free slots",
    access: API_KEY,
    responses: { 200: jsonResponse(QueueList, "Every queue the tenant used, by name") },
    refusals: [],
  },
  async (c) => {
    const tenant = c.var.tenant;
    const queues = await tenantPoolsStub(c.env, tenant).queues();
    const infos = await Promise.all(
      queues.map((queue) => dispatcherStub(c.env, tenant, queue).queueInfo(tenant, queue)),
    );
    return c.json({ queues: infos }, 200);
  },
);

apiRoute(
  pools,
  {
    method: "get",
    path: "/queues/{queue}",
    tags,
    summary: "One queue: settings, load, and its runs with their places and hosts",
    description: "A queue nobody used yet answers with its defaults (no limit, assignMs 30000) and stores nothing.",
    access: API_KEY,
    request: { params: QueueParams },
    responses: { 200: jsonResponse(QueueDetail, "The queue") },
    refusals: ["invalid_query"],
  },
  async (c) => {
    const { queue } = c.req.valid("param");
    return c.json(await dispatcherStub(c.env, c.var.tenant, queue).queueDetail(c.var.tenant, queue), 200);
  },
);

apiRoute(
  pools,
  {
    method: "put",
    path: "/queues/{queue}",
    tags,
    summary: "Set a queue's limits: maxConcurrent (null for none) and assignMs",
    description:
      "Raising `maxConcurrent` assigns at once the queued runs it now allows; lowering it takes nothing back from hosts.",
    access: API_KEY,
    request: { params: QueueParams, body: jsonRequest(QueueSettingsBody) },
    responses: { 200: jsonResponse(QueueInfo, "The queue as now set") },
    refusals: ["invalid_path", ...bodyRefusals],
  },
  async (c) => {
    const tenant = c.var.tenant;
    const { queue } = c.req.valid("param");
    unwrap(await useQueue(c.env, tenant, queue, "path"));
    return c.json(await dispatcherStub(c.env, tenant, queue).configure(tenant, queue, c.req.valid("json")), 200);
  },
);
