import { mintRunTokens } from "../auth/mint.ts";
import { runStub, tenantPoolsStub } from "../objects/stubs.ts";
import { tenantIndex } from "../objects/tenant-index-shards.ts";
import { placeResult, withPlacement, withPoolHosts } from "../pools/placement.ts";
import {
  CreatedRun,
  CreateRunBody,
  DEFAULT_QUEUE,
  ListRunsQuery,
  metaFilters,
  PurgedRun,
  RunParams,
  RunRecord,
  RunsPage,
} from "../protocol/index.ts";
import { API_KEY, RUN_BY_API_KEY, RUN_READER } from "./access.ts";
import { apiRoute, apiRouter, jsonRequest, jsonResponse } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { tooManyQueues } from "./pool-queues.ts";
import { respond, unwrap } from "./respond.ts";

/** The queue a create body puts its run in: a pool run's (agent names a profile), else none. */
function poolQueueOf(body: CreateRunBody): string | null {
  return typeof body.agent === "string" ? (body.queue ?? DEFAULT_QUEUE) : null;
}

/** Creating, reading, listing and deleting runs (their tokens: tokens.ts). */
export const runs = apiRouter();
const tags = ["runs"];

apiRoute(
  runs,
  {
    method: "post",
    path: "/",
    tags,
    summary: "Create a run",
    description:
      "Idempotent by `runId`: the same id with an identical body answers 200 with the same run (and fresh tokens); a different body is 409; a purged id 410. Each token comes with its id, for `DELETE /v1/runs/{runId}/tokens/{tokenId}`.",
    access: API_KEY,
    request: { body: jsonRequest(CreateRunBody, false) },
    responses: {
      201: jsonResponse(CreatedRun, "Created, with its runner and viewer tokens"),
      200: jsonResponse(CreatedRun, "An identical earlier create: the same run, fresh tokens"),
    },
    refusals: ["invalid_json", "invalid_body", "payload_too_large", "conflict", "gone", "too_many_tokens"],
  },
  async (c) => {
    const tenant = c.var.tenant;
    const body = c.req.valid("json");
    const runId = body.runId ?? crypto.randomUUID();
    const queue = poolQueueOf(body);
    const pools = tenantPoolsStub(c.env, tenant);
    // The queue is checked before the run is stored and recorded after: a refused create stores nothing.
    if (queue !== null && !(await pools.queueAllowed(queue))) unwrap(tooManyQueues("body", queue));
    const stub = runStub(c.env, tenant, runId);
    const { run, created } = unwrap(await placeResult(c.env, tenant, await stub.create(tenant, runId, body)));
    if (queue !== null) await pools.recordQueue(queue);
    const asks = [{ role: "runner" }, { role: "viewer" }] as const;
    const [runner, viewer] = unwrap(
      await mintRunTokens(c.env, { tenant, runId, stub, timeouts: run.timeouts }, [...asks]),
    );
    if (!runner || !viewer) throw new Error("minting answered fewer tokens than asked");
    return c.json(
      {
        run,
        runnerToken: runner.token,
        runnerTokenId: runner.tokenId,
        viewerToken: viewer.token,
        viewerTokenId: viewer.tokenId,
      },
      created ? 201 : 200,
    );
  },
);

apiRoute(
  runs,
  {
    method: "get",
    path: "/",
    tags,
    summary: "List the tenant's runs, newest first",
    description:
      "Filters combine (every one must match): `status`, `agent`, `tag` (repeatable: every tag), `meta.KEY=value` (repeatable: a metadata entry whose string, number or boolean value reads `value`), `createdAfter`, `createdBefore`. Pass `nextCursor` back with the same filters for the next page.",
    access: API_KEY,
    request: { query: ListRunsQuery },
    responses: { 200: jsonResponse(RunsPage, "A page of runs; pass `nextCursor` back as `cursor` for the next") },
    refusals: ["invalid_query"],
  },
  async (c) => {
    const meta = unwrap(metaFilters(c.req.queries()));
    const { tag, ...query } = c.req.valid("query");
    const page = await tenantIndex(c.env, c.var.tenant).list({ ...query, tags: tag, meta });
    return respond(c, await withPoolHosts(c.env, c.var.tenant, page), 200);
  },
);

apiRoute(
  runs,
  {
    method: "get",
    path: "/{runId}",
    tags,
    summary: "Read a run",
    access: RUN_READER,
    request: { params: RunParams },
    responses: { 200: jsonResponse(RunRecord, "The run record") },
    refusals: ["not_found", "gone"],
  },
  async (c) => {
    const found = unwrap(await runOf(c).get());
    return c.json(await withPlacement(c.env, c.var.run.tenant, found), 200);
  },
);

apiRoute(
  runs,
  {
    method: "delete",
    path: "/{runId}",
    tags,
    summary: "Purge a finished run",
    description:
      "Deletes the log, commands and approvals, and revokes every token of the run; a tombstone stays, so later reads by API key answer 410 with the final status.",
    access: RUN_BY_API_KEY,
    request: { params: RunParams },
    responses: { 200: jsonResponse(PurgedRun, "Purged") },
    refusals: ["not_found", "gone", "not_terminal"],
  },
  async (c) => respond(c, await runOf(c).purge(), 200),
);
