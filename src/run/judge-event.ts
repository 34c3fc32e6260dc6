import { judgeProducer, type ProducerState, RUNNER_PRODUCER_RULES } from "../log/producers.ts";
import { type Fenced, fenced, type RunnerEvent } from "../protocol/index.ts";
import { canonicalJson } from "./canonical.ts";
import { generationProducer } from "./claim-epoch.ts";

/** How one runner event relates to the stored log. */
export type EventVerdict =
  | { kind: "accepted"; state: ProducerState }
  | { kind: "duplicate" }
  | { kind: "conflict"; sourceSeq: number }
  | { kind: "gap"; expected: number }
  | Fenced;

/**
 * Judges one incoming runner event of `generation` with the log core's producer verdict, given
 * that generation's state so far in this batch. Pure: it stores nothing. A sourceSeq already stored is a duplicate
 * only if its content is identical (`stored` finds it, in the log or earlier in the batch);
 * otherwise it is a conflict.
 */
export function judgeRunnerEvent(
  runner: ProducerState | null,
  epoch: number,
  generation: number,
  event: RunnerEvent,
  stored: (sourceSeq: number) => { type: string; data?: unknown } | null,
): EventVerdict {
  const verdict = judgeProducer(
    runner,
    { producerId: generationProducer(generation), epoch, seq: event.sourceSeq },
    RUNNER_PRODUCER_RULES,
  );
  switch (verdict.kind) {
    case "accepted":
      return { kind: "accepted", state: verdict.state };
    case "gap":
      return { kind: "gap", expected: verdict.expected };
    case "stale_epoch":
      return fenced(
        verdict.current,
        `epoch ${epoch} does not hold the run (the current claim is epoch ${verdict.current})`,
      );
    case "bad_epoch_start":
      // Runner epochs are opened only by claims, so a runner can never raise its own.
      return fenced(epoch, `epoch ${epoch} was never opened by a claim`);
    case "duplicate": {
      const earlier = stored(event.sourceSeq);
      const same =
        earlier !== null &&
        earlier.type === event.type &&
        canonicalJson(earlier.data ?? null) === canonicalJson(event.data ?? null);
      return same ? { kind: "duplicate" } : { kind: "conflict", sourceSeq: event.sourceSeq };
    }
  }
}
