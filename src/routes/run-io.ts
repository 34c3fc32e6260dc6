import { Hono } from "hono";
import { ApprovalBody, CancelBody, CommandBody, EventsQuery, isFailure } from "../protocol/index.ts";
import type { AppEnv } from "./app-env.ts";
import { runAccess } from "./auth.ts";
import { readBody, readQuery, respond } from "./respond.ts";
import { runStub } from "../objects/stubs.ts";

/** Reading a run's events and sending it commands, approvals and cancels. */
export const runIo = new Hono<AppEnv>();

runIo.get("/:runId/events", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"] });
  if (access instanceof Response) return access;
  const query = readQuery(c, EventsQuery);
  if (query instanceof Response) return query;
  return respond(await runStub(c.env, access.tenant, access.runId).events(query.after, query.limit));
});

runIo.post("/:runId/commands", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"], needInteract: true });
  if (access instanceof Response) return access;
  const body = await readBody(c, CommandBody);
  if (body instanceof Response) return body;
  const result = await runStub(c.env, access.tenant, access.runId).command(body);
  return respond(result, !isFailure(result) && result.created ? 201 : 200);
});

runIo.post("/:runId/approvals/:requestId", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"], needInteract: true });
  if (access instanceof Response) return access;
  const body = await readBody(c, ApprovalBody);
  if (body instanceof Response) return body;
  const result = await runStub(c.env, access.tenant, access.runId).approve(c.req.param("requestId"), body);
  return respond(result, !isFailure(result) && result.created ? 201 : 200);
});

runIo.post("/:runId/cancel", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"], needInteract: true });
  if (access instanceof Response) return access;
  const body = await readBody(c, CancelBody);
  if (body instanceof Response) return body;
  const result = await runStub(c.env, access.tenant, access.runId).cancel(body);
  return respond(result, !isFailure(result) && result.created ? 202 : 200);
});
