import { RecoverAccepted, RecoverBody, RecoveryState, RunParams } from "../protocol/index.ts";
import { placeResult } from "../pools/placement.ts";
import { RUN_OPERATOR, RUNNER_HTTP } from "./access.ts";
import { apiRoute, apiRouter, jsonRequest, jsonResponse } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { respond } from "./respond.ts";

/** Recovering a run lost with its sandbox: the operator's decision and what a resuming bridge reads. */
export const recovery = apiRouter();
const tags = ["recovery"];

apiRoute(
  recovery,
  {
    method: "post",
    path: "/{runId}/recover",
    tags,
    summary: "Decide how a recovering run goes on: resume, restart or fail",
    description:
      "Only while the run is `recovering`. Idempotent by `commandId` (a repeat answers 200); the first decision of a recovery wins, another is 409 conflict. `resume` needs a reported agent session and a checkpoint (else 409 not_resumable); `fail` ends the run failed (`recovery_declined`).",
    access: RUN_OPERATOR,
    request: { params: RunParams, body: jsonRequest(RecoverBody) },
    responses: {
      201: jsonResponse(RecoverAccepted, "Decided"),
      200: jsonResponse(RecoverAccepted, "A repeat of the same decision"),
    },
    refusals: [
      "invalid_json",
      "invalid_body",
      "payload_too_large",
      "not_found",
      "gone",
      "conflict",
      "not_recovering",
      "not_resumable",
    ],
  },
  async (c) => {
    const result = await placeResult(
      c.env,
      c.var.run.tenant,
      await runOf(c).recover(c.req.valid("json"), c.var.run.token),
    );
    return result.ok && !result.value.created ? respond(c, result, 200) : respond(c, result, 201);
  },
);

apiRoute(
  recovery,
  {
    method: "get",
    path: "/{runId}/recovery",
    tags,
    summary: "The run's recovery state, for a bridge about to resume it",
    description:
      "`mode` is null unless the run is `recovering`. A resuming bridge claims generation `generation + 1` when the mode is `resume`.",
    access: RUNNER_HTTP,
    request: { params: RunParams },
    responses: { 200: jsonResponse(RecoveryState, "The recovery state") },
    refusals: ["not_found", "gone"],
  },
  async (c) => respond(c, await runOf(c).recovery(), 200),
);
