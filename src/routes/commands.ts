import { Hono } from "hono";
import { ApprovalBody, CancelBody, CommandBody, type Result } from "../protocol/index.ts";
import { runStub } from "../objects/stubs.ts";
import type { AppEnv } from "./app-env.ts";
import { runAccess } from "./auth.ts";
import { failureResponse, readBody, respond } from "./respond.ts";

/** Operators acting on a run: commands, approval decisions and cancels. */
export const commands = new Hono<AppEnv>();

const interacting = { apiKey: true, tokens: ["viewer" as const], needInteract: true };

/** `created` answers `status`, a repeat of an earlier request 200. */
const respondCreated = <T extends { created: boolean }>(result: Result<T>, status: number) =>
  respond(result, result.ok && result.value.created ? status : 200);

commands.post("/:runId/commands", async (c) => {
  const access = runAccess(c, interacting);
  if (!access.ok) return failureResponse(access);
  const body = await readBody(c, CommandBody);
  if (!body.ok) return failureResponse(body);
  const stub = runStub(c.env, access.value.tenant, access.value.runId);
  return respondCreated(await stub.command(body.value), 201);
});

commands.post("/:runId/approvals/:requestId", async (c) => {
  const access = runAccess(c, interacting);
  if (!access.ok) return failureResponse(access);
  const body = await readBody(c, ApprovalBody);
  if (!body.ok) return failureResponse(body);
  const stub = runStub(c.env, access.value.tenant, access.value.runId);
  return respondCreated(await stub.approve(c.req.param("requestId"), body.value), 201);
});

commands.post("/:runId/cancel", async (c) => {
  const access = runAccess(c, interacting);
  if (!access.ok) return failureResponse(access);
  const body = await readBody(c, CancelBody);
  if (!body.ok) return failureResponse(body);
  const stub = runStub(c.env, access.value.tenant, access.value.runId);
  return respondCreated(await stub.cancel(body.value), 202);
});
