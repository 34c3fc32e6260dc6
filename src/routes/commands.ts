import { Hono } from "hono";
import type { z } from "zod";
import { runStub } from "../objects/stubs.ts";
import { ApprovalBody, CancelBody, CommandBody, type Result } from "../protocol/index.ts";
import type { AppContext, AppEnv } from "./app-env.ts";
import { runAccess } from "./auth.ts";
import { failureResponse, readBody, respond } from "./respond.ts";

/** Operators acting on a run: commands, approval decisions and cancels. */
export const commands = new Hono<AppEnv>();

type RunApi = ReturnType<typeof runStub>;

/**
 * An operator's write: an API key or an interacting viewer token, a validated body, then the
 * run's answer: `status` when it created something, 200 for a repeat of an earlier request.
 */
function operatorWrite<S extends z.ZodType>(
  schema: S,
  status: 201 | 202,
  act: (run: RunApi, body: z.infer<S>, c: AppContext) => Promise<Result<{ created: boolean }>>,
) {
  return async (c: AppContext) => {
    const access = runAccess(c, { apiKey: true, tokens: ["viewer"], needInteract: true });
    if (!access.ok) return failureResponse(access);
    const body = await readBody(c, schema);
    if (!body.ok) return failureResponse(body);
    const result = await act(runStub(c.env, access.value.tenant, access.value.runId), body.value, c);
    return respond(result, result.ok && result.value.created ? status : 200);
  };
}

commands.post(
  "/:runId/commands",
  operatorWrite(CommandBody, 201, (run, body) => run.command(body)),
);
commands.post(
  "/:runId/approvals/:requestId",
  operatorWrite(ApprovalBody, 201, (run, body, c) => run.approve(c.req.param("requestId") ?? "", body)),
);
commands.post(
  "/:runId/cancel",
  operatorWrite(CancelBody, 202, (run, body) => run.cancel(body)),
);
