/** Every measurement, in the order they run and appear in the table. */
import { catchUp } from "./measure-catch-up.ts";
import { runnerIngest } from "./measure-ingest.ts";
import { latencyMeasurement } from "./measure-latency.ts";
import { batched, roundTrips, sequentialSingle } from "./measure-requests.ts";
import { manyRuns } from "./measure-runs.ts";
import { viewerFanOut } from "./measure-viewers.ts";
import type { Measurement } from "./measurement.ts";

export const ALL_MEASUREMENTS: Measurement[] = [
  roundTrips,
  sequentialSingle,
  batched,
  catchUp,
  latencyMeasurement("long-poll"),
  latencyMeasurement("sse"),
  runnerIngest,
  viewerFanOut,
  manyRuns,
];
