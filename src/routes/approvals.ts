import { ApprovalParams, ApprovalRecord } from "../protocol/index.ts";
import { RUN_READER } from "./access.ts";
import { apiRoute, apiRouter, jsonResponse } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { respond } from "./respond.ts";

/** Reading one approval in full: the run record carries only summaries of the pending ones. */
export const approvals = apiRouter();

apiRoute(
  approvals,
  {
    method: "get",
    path: "/{runId}/approvals/{requestId}",
    tags: ["runs"],
    summary: "One approval, with the full request",
    description:
      "Any approval the run has recorded, pending or settled, with its `data` (the agent's request). The run record's `pendingApprovals` are summaries that leave large requests out.",
    access: RUN_READER,
    request: { params: ApprovalParams },
    responses: { 200: jsonResponse(ApprovalRecord, "The approval") },
    refusals: ["not_found", "gone"],
  },
  async (c) => {
    return respond(c, await runOf(c).approval(c.req.valid("param").requestId), 200);
  },
);
