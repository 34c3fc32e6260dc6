import type { ProducerTable } from "../log/producers.ts";

/** The run's runner is the producer of its log: generation 1 under this producer id. */
export const RUNNER_PRODUCER = "runner";

/**
 * Each agent generation is its own producer, since its sourceSeq restarts at 1: `runner` for
 * generation 1 (so runs stored before generations existed read on unchanged), `runner.g<N>` after.
 */
export function generationProducer(generation: number): string {
  return generation === 1 ? RUNNER_PRODUCER : `${RUNNER_PRODUCER}.g${generation}`;
}

/**
 * The run's claim epoch: every claim increments it, and only the runner holding the current one
 * may store events, ack commands or complete the run. It is stored as the log core's producer
 * epoch of RUNNER_PRODUCER (src/log/producers.ts), so a stale runner's events are fenced by the
 * same rule that fences a stale Durable Streams producer. `increment` is the one place it grows;
 * a later generation's producer row is given the same epoch at each claim (RunStore.claim).
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
