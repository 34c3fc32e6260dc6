import { mintToken } from "../auth/tokens.ts";
import { runStub, tenantIndexStub, tenantPoolsStub } from "../objects/stubs.ts";
import { placeResult, withPlacement } from "../pools/placement.ts";
import {
  CreatedRun,
  CreateRunBody,
  DEFAULT_QUEUE,
  fail,
  ListRunsQuery,
  MintedToken,
  PurgedRun,
  RunParams,
  RunRecord,
  RunsPage,
  TokenBody,
} from "../protocol/index.ts";
import { API_KEY, RUN_BY_API_KEY, RUN_READER } from "./access.ts";
import { apiRoute, apiRouter, jsonRequest, jsonResponse } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { TOO_MANY_QUEUES } from "./pools.ts";
import { respond, unwrap } from "./respond.ts";

/** The queue a create body puts its run in: a pool run's (agent names a profile), else none. */
function poolQueueOf(body: CreateRunBody): string | null {
  return typeof body.agent === "string" ? (body.queue ?? DEFAULT_QUEUE) : null;
}

/** Creating, reading, listing and deleting runs, and minting their tokens. */
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
      "Idempotent by `runId`: the same id with an identical body answers 200 with the same run (and fresh tokens); a different body is 409; a purged id 410.",
    access: API_KEY,
    request: { body: jsonRequest(CreateRunBody, false) },
    responses: {
      201: jsonResponse(CreatedRun, "Created, with its runner and viewer tokens"),
      200: jsonResponse(CreatedRun, "An identical earlier create: the same run, fresh tokens"),
    },
    refusals: ["invalid_json", "invalid_body", "payload_too_large", "conflict", "gone"],
  },
  async (c) => {
    const tenant = c.var.tenant;
    const body = c.req.valid("json");
    const runId = body.runId ?? crypto.randomUUID();
    const queue = poolQueueOf(body);
    if (queue !== null && !(await tenantPoolsStub(c.env, tenant).addQueue(queue))) {
      unwrap(fail("invalid_body", TOO_MANY_QUEUES));
    }
    const { run, created } = unwrap(
      await placeResult(c.env, tenant, await runStub(c.env, tenant, runId).create(tenant, runId, body)),
    );
    const [runnerToken, viewerToken] = await Promise.all([
      mintToken(c.env.TOKEN_SECRET, { tenant, runId, role: "runner" }, { timeouts: run.timeouts }),
      mintToken(c.env.TOKEN_SECRET, { tenant, runId, role: "viewer" }, { timeouts: run.timeouts }),
    ]);
    return c.json({ run, runnerToken, viewerToken }, created ? 201 : 200);
  },
);

apiRoute(
  runs,
  {
    method: "get",
    path: "/",
    tags,
    summary: "List the tenant's runs, newest first",
    access: API_KEY,
    request: { query: ListRunsQuery },
    responses: { 200: jsonResponse(RunsPage, "A page of runs; pass `nextCursor` back as `cursor` for the next") },
    refusals: ["invalid_query"],
  },
  async (c) => respond(c, await tenantIndexStub(c.env, c.var.tenant).list(c.req.valid("query")), 200),
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
      "Deletes the log, commands and approvals; a tombstone stays, so later reads answer 410 with the final status.",
    access: RUN_BY_API_KEY,
    request: { params: RunParams },
    responses: { 200: jsonResponse(PurgedRun, "Purged") },
    refusals: ["not_found", "gone", "not_terminal"],
  },
  async (c) => respond(c, await runOf(c).purge(), 200),
);

apiRoute(
  runs,
  {
    method: "post",
    path: "/{runId}/tokens",
    tags,
    summary: "Mint a runner or viewer token",
    description:
      "Default lifetimes: viewer 24 h; runner `runMs + takeoverMs + 24 h`. `interact` lets a viewer token send commands.",
    access: RUN_BY_API_KEY,
    request: { params: RunParams, body: jsonRequest(TokenBody) },
    responses: { 201: jsonResponse(MintedToken, "The token") },
    refusals: ["invalid_json", "invalid_body", "payload_too_large", "not_found", "gone"],
  },
  async (c) => {
    const { tenant, runId } = c.var.run;
    const { role, ttlMs, interact: asked } = c.req.valid("json");
    const run = unwrap(await runOf(c).get());
    const interact = role === "viewer" && asked === true;
    const token = await mintToken(
      c.env.TOKEN_SECRET,
      { tenant, runId, role },
      { timeouts: run.timeouts, ttlMs, interact },
    );
    return c.json({ token, role, interact }, 201);
  },
);
