import { z } from "zod";
import { RunId } from "./run.ts";

/** `POST /v1/runs/{runId}/rerun`: the new run's id, or one made from the old one's. */
export const RerunBody = z
  .object({ runId: RunId.optional().describe("Default: the old id with `-r<n>`, n counting its re-runs") })
  .strict()
  .meta({ id: "RerunBody" });
export type RerunBody = z.infer<typeof RerunBody>;

/** Both directions of re-running: what this run re-ran, and the runs made from it, oldest first. */
export const RunReruns = z
  .object({
    rerunOf: z.union([RunId, z.null()]).describe("The run this one re-ran (its metadata's `rerunOf`)"),
    reruns: z.array(RunId),
  })
  .meta({ id: "RunReruns" });
export type RunReruns = z.infer<typeof RunReruns>;

/** The metadata key a re-run carries its origin in. */
export const RERUN_OF = "rerunOf";
