import type { Context } from "hono";
import {
  ApprovalAccepted,
  ApprovalBody,
  ApprovalParams,
  CancelAccepted,
  CancelBody,
  CommandAccepted,
  CommandBody,
  type Result,
  RunParams,
} from "../protocol/index.ts";
import { placeResult } from "../pools/placement.ts";
import { RUN_OPERATOR } from "./access.ts";
import { apiRoute, apiRouter, jsonRequest, jsonResponse } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { respond } from "./respond.ts";

/**
 * Operators acting on a run: commands, approval decisions and cancels. Each answers with its
 * success status when it created something, 200 for a repeat of an earlier request.
 */
export const commands = apiRouter();
const tags = ["operators"];
const bodyRefusals = ["invalid_json", "invalid_body", "payload_too_large"] as const;

/** `status` for a request that created something, 200 for a repeat; a refusal leaves through respond. */
function answer<T extends { created: boolean }, S extends 201 | 202>(c: Context, result: Result<T>, status: S) {
  return result.ok && !result.value.created ? respond(c, result, 200) : respond(c, result, status);
}

apiRoute(
  commands,
  {
    method: "post",
    path: "/{runId}/commands",
    tags,
    summary: "Send a command: input, interrupt or cancel",
    description:
      "Idempotent by `commandId`: an identical repeat answers 200 with the stored record; the same id with another body is 409.",
    access: RUN_OPERATOR,
    request: { params: RunParams, body: jsonRequest(CommandBody) },
    responses: {
      201: jsonResponse(CommandAccepted, "Accepted"),
      200: jsonResponse(CommandAccepted, "A repeat of an accepted command"),
    },
    refusals: [...bodyRefusals, "not_found", "gone", "conflict", "terminal_run"],
  },
  async (c) => {
    return answer(c, await runOf(c).command(c.req.valid("json"), c.var.run.token), 201);
  },
);

apiRoute(
  commands,
  {
    method: "post",
    path: "/{runId}/approvals/{requestId}",
    tags,
    summary: "Approve or deny a pending tool call",
    description:
      "The decision reaches the runner as a command of kind `approval`. An unknown or expired request, or a different decision, is 409 stale.",
    access: RUN_OPERATOR,
    request: { params: ApprovalParams, body: jsonRequest(ApprovalBody) },
    responses: {
      201: jsonResponse(ApprovalAccepted, "Resolved"),
      200: jsonResponse(ApprovalAccepted, "A repeat of the same decision"),
    },
    refusals: [...bodyRefusals, "not_found", "gone", "stale", "terminal_run"],
  },
  async (c) => {
    const { requestId } = c.req.valid("param");
    return answer(c, await runOf(c).approve(requestId, c.req.valid("json"), c.var.run.token), 201);
  },
);

apiRoute(
  commands,
  {
    method: "post",
    path: "/{runId}/cancel",
    tags,
    summary: "Cancel a run",
    description:
      "With a runner connected it gets a `cancel` command and 30 s to finish with its own outcome, after which the run ends `cancelled` (`cancel_unconfirmed`); with none, the run is cancelled at once.",
    access: RUN_OPERATOR,
    request: { params: RunParams, body: jsonRequest(CancelBody, false) },
    responses: {
      202: jsonResponse(CancelAccepted, "Cancelling (or cancelled)"),
      200: jsonResponse(CancelAccepted, "Already cancelled"),
    },
    refusals: [...bodyRefusals, "not_found", "gone", "conflict", "terminal_run"],
  },
  async (c) => {
    return answer(
      c,
      await placeResult(c.env, c.var.run.tenant, await runOf(c).cancel(c.req.valid("json"), c.var.run.token)),
      202,
    );
  },
);
