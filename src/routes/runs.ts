import { Hono } from "hono";
import { mintToken } from "../auth/tokens.ts";
import { CreateRunBody, ListRunsQuery, TokenBody } from "../protocol/index.ts";
import { runStub, tenantIndexStub } from "../objects/stubs.ts";
import type { AppEnv } from "./app-env.ts";
import { runAccess, tenantOf } from "./auth.ts";
import { failureResponse, readBody, readQuery, respond } from "./respond.ts";

/** Creating, reading, listing and deleting runs, and minting their tokens. */
export const runs = new Hono<AppEnv>();

runs.post("/", async (c) => {
  const tenant = tenantOf(c);
  if (!tenant.ok) return failureResponse(tenant);
  const body = await readBody(c, CreateRunBody);
  if (!body.ok) return failureResponse(body);
  const runId = body.value.runId ?? crypto.randomUUID();
  const result = await runStub(c.env, tenant.value, runId).create(tenant.value, runId, body.value);
  if (!result.ok) return failureResponse(result);
  const { run, created } = result.value;
  const scope = { tenant: tenant.value, runId };
  const [runnerToken, viewerToken] = await Promise.all([
    mintToken(c.env.TOKEN_SECRET, { ...scope, role: "runner" }, { timeouts: run.timeouts }),
    mintToken(c.env.TOKEN_SECRET, { ...scope, role: "viewer" }, { timeouts: run.timeouts }),
  ]);
  return c.json({ run, runnerToken, viewerToken }, created ? 201 : 200);
});

runs.get("/", async (c) => {
  const tenant = tenantOf(c);
  if (!tenant.ok) return failureResponse(tenant);
  const query = readQuery(c, ListRunsQuery);
  if (!query.ok) return failureResponse(query);
  return respond(await tenantIndexStub(c.env, tenant.value).list(query.value));
});

runs.get("/:runId", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"] });
  if (!access.ok) return failureResponse(access);
  return respond(await runStub(c.env, access.value.tenant, access.value.runId).get());
});

runs.delete("/:runId", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: [] });
  if (!access.ok) return failureResponse(access);
  return respond(await runStub(c.env, access.value.tenant, access.value.runId).purge());
});

runs.post("/:runId/tokens", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: [] });
  if (!access.ok) return failureResponse(access);
  const body = await readBody(c, TokenBody);
  if (!body.ok) return failureResponse(body);
  const { tenant, runId } = access.value;
  const run = await runStub(c.env, tenant, runId).get();
  if (!run.ok) return failureResponse(run);
  const { role, ttlMs } = body.value;
  const interact = role === "viewer" && body.value.interact === true;
  const options = { timeouts: run.value.timeouts, ttlMs, interact };
  const token = await mintToken(c.env.TOKEN_SECRET, { tenant, runId, role }, options);
  return c.json({ token, role, interact }, 201);
});
