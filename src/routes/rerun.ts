import { mintRunTokens } from "../auth/mint.ts";
import { runStub } from "../objects/stubs.ts";
import {
  CreatedRun,
  CreateRunBody,
  RERUN_OF,
  RerunBody,
  RunParams,
  type RunRecord,
  RunReruns,
} from "../protocol/index.ts";
import { RUN_BY_API_KEY, RUN_READER } from "./access.ts";
import { apiRoute, apiRouter, jsonRequest, jsonResponse } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { unwrap } from "./respond.ts";

/** Re-running a run: a new run with the same create body, linked both ways. */
export const rerun = apiRouter();
const tags = ["runs"];

/**
 * The create body that made `run`, as far as the record keeps it: every field the create body
 * takes that the record holds by the same name (agent, input, metadata, timeouts, retention,
 * and any added later), with `rerunOf` in the metadata.
 */
function bodyOf(run: RunRecord, runId: string): CreateRunBody {
  const record = run as unknown as Record<string, unknown>;
  const body: Record<string, unknown> = {};
  const shape = CreateRunBody.shape as Record<string, { safeParse(value: unknown): { success: boolean } }>;
  for (const [field, schema] of Object.entries(shape)) {
    const value = record[field];
    // Only a value the create body would take under that name (the record's `recovery` is state, not policy).
    if (field !== "runId" && value !== null && value !== undefined && schema.safeParse(value).success) {
      body[field] = value;
    }
  }
  // A pool run's recovery policy is kept as `recoveryPolicy`; the create body names it in two fields.
  const policy = record.recoveryPolicy as { mode?: unknown; maxRecoveries?: unknown } | null | undefined;
  if (policy && typeof run.agent === "string") {
    body.recovery = policy.mode;
    body.maxRecoveries = policy.maxRecoveries;
  }
  body.metadata = { ...run.metadata, [RERUN_OF]: run.id };
  return CreateRunBody.parse({ ...body, runId });
}

apiRoute(
  rerun,
  {
    method: "post",
    path: "/{runId}/rerun",
    tags,
    summary: "Run again: a new run with this one's agent, input, metadata and timeouts",
    description:
      "The new run's metadata names this one (`rerunOf`), and this one lists it (`GET /v1/runs/{runId}/reruns`). Any status may be re-run. With a `runId` it is idempotent as a create is.",
    access: RUN_BY_API_KEY,
    request: { params: RunParams, body: jsonRequest(RerunBody, false) },
    responses: {
      201: jsonResponse(CreatedRun, "The new run, with its runner and viewer tokens"),
      200: jsonResponse(CreatedRun, "That run id was already this re-run: the same run, fresh tokens"),
    },
    refusals: ["invalid_json", "invalid_body", "payload_too_large", "not_found", "gone", "conflict"],
  },
  async (c) => {
    const { tenant } = c.var.run;
    const old = runOf(c);
    const run = unwrap(await old.get());
    const runId = c.req.valid("json").runId ?? `${run.id.slice(0, 118)}-r${(await old.reruns()).length + 1}`;
    const stub = runStub(c.env, tenant, runId);
    const made = unwrap(await stub.create(tenant, runId, bodyOf(run, runId)));
    await old.noteRerun(runId);
    const asks = [{ role: "runner" }, { role: "viewer" }] as const;
    const [runner, viewer] = unwrap(
      await mintRunTokens(c.env, { tenant, runId, stub, timeouts: made.run.timeouts }, [...asks]),
    );
    if (!runner || !viewer) throw new Error("minting answered fewer tokens than asked");
    return c.json(
      {
        run: made.run,
        runnerToken: runner.token,
        runnerTokenId: runner.tokenId,
        viewerToken: viewer.token,
        viewerTokenId: viewer.tokenId,
      },
      made.created ? 201 : 200,
    );
  },
);

apiRoute(
  rerun,
  {
    method: "get",
    path: "/{runId}/reruns",
    tags,
    summary: "The run this one re-ran, and the runs re-run from it",
    access: RUN_READER,
    request: { params: RunParams },
    responses: { 200: jsonResponse(RunReruns, "Both directions") },
    refusals: ["not_found", "gone"],
  },
  async (c) => {
    const stub = runOf(c);
    const run = unwrap(await stub.get());
    const origin = run.metadata[RERUN_OF];
    return c.json({ rerunOf: typeof origin === "string" ? origin : null, reruns: await stub.reruns() }, 200);
  },
);
