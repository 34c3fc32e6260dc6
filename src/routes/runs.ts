import { Hono } from "hono";
import { CreateRunBody, isFailure, ListRunsQuery, TokenBody } from "../protocol/index.ts";
import type { AppEnv } from "./app-env.ts";
import { runAccess, tenantOf } from "./auth.ts";
import { errorResponse, failureResponse, readBody, readQuery, respond } from "./respond.ts";
import { runStub, tenantIndexStub } from "../objects/stubs.ts";
import { mintToken } from "./tokens.ts";

/** Creating, reading, listing and deleting runs, and minting their tokens. */
export const runs = new Hono<AppEnv>();

runs.post("/", async (c) => {
  const tenant = tenantOf(c);
  if (tenant instanceof Response) return tenant;
  const body = await readBody(c, CreateRunBody);
  if (body instanceof Response) return body;
  const runId = body.runId ?? crypto.randomUUID();
  const result = await runStub(c.env, tenant, runId).create(tenant, runId, body);
  if (isFailure(result)) return failureResponse(result);
  const { run } = result;
  const [runnerToken, viewerToken] = await Promise.all([
    mintToken(c.env, tenant, runId, "runner", { timeouts: run.timeouts }),
    mintToken(c.env, tenant, runId, "viewer", { timeouts: run.timeouts }),
  ]);
  return c.json({ run, runnerToken, viewerToken }, result.created ? 201 : 200);
});

runs.get("/", async (c) => {
  const tenant = tenantOf(c);
  if (tenant instanceof Response) return tenant;
  const query = readQuery(c, ListRunsQuery);
  if (query instanceof Response) return query;
  const page = await tenantIndexStub(c.env, tenant).list(query);
  if ("invalidCursor" in page) return errorResponse("invalid_query", "cursor is not one this API returned");
  return c.json(page);
});

runs.get("/:runId", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"] });
  if (access instanceof Response) return access;
  return respond(await runStub(c.env, access.tenant, access.runId).get());
});

runs.delete("/:runId", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: [] });
  if (access instanceof Response) return access;
  return respond(await runStub(c.env, access.tenant, access.runId).purge());
});

runs.post("/:runId/tokens", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: [] });
  if (access instanceof Response) return access;
  const body = await readBody(c, TokenBody);
  if (body instanceof Response) return body;
  const run = await runStub(c.env, access.tenant, access.runId).get();
  if (isFailure(run)) return failureResponse(run);
  const options = {
    timeouts: run.timeouts,
    ...(body.ttlMs ? { ttlMs: body.ttlMs } : {}),
    interact: body.interact === true,
  };
  const token = await mintToken(c.env, access.tenant, access.runId, body.role, options);
  return c.json({ token, role: body.role, interact: body.role === "viewer" && body.interact === true }, 201);
});
