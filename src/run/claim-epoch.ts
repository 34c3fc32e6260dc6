import type { ProducerTable } from "../log/producers.ts";

/** The run's runner is the one producer of its log, under this producer id. */
export const RUNNER_PRODUCER = "runner";

/**
 * The run's claim epoch: every claim increments it, and only the runner holding the current one
 * may store events, ack commands or complete the run. It is stored as the log core's producer
 * epoch of RUNNER_PRODUCER (src/log/producers.ts), so a stale runner's events are fenced by the
 * same rule that fences a stale Durable Streams producer. `increment` is the one place it grows.
 */
export class ClaimEpoch {
  private readonly producers: ProducerTable;

  constructor(producers: ProducerTable) {
    this.producers = producers;
  }

  /** The epoch of the newest claim, 0 before the first. */
  current(): number {
    return this.producers.get(RUNNER_PRODUCER)?.epoch ?? 0;
  }

  /** Opens the next epoch for a new claim and returns it. */
  increment(now: number): number {
    return this.producers.bump(RUNNER_PRODUCER, now).epoch;
  }
}
