/** Every measurement, in the order they run and appear in the table. */
import { latencyMeasurement } from "./measure-latency.ts";
import { catchUp } from "./measure-catch-up.ts";
import { runnerIngest } from "./measure-ingest.ts";
import { batched, roundTripMeasurement, sequentialSingle } from "./measure-requests.ts";
import type { Measurement } from "./measurement.ts";
import type { FloorWorker } from "./targets.ts";

export function allMeasurements(getFloorWorker: () => FloorWorker | null): Measurement[] {
  return [
    roundTripMeasurement(getFloorWorker),
    sequentialSingle,
    batched,
    catchUp,
    latencyMeasurement("long-poll"),
    latencyMeasurement("sse"),
    runnerIngest,
  ];
}
