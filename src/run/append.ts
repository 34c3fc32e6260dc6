import type { ProducerState } from "../log/producers.ts";
import type { RunnerEvent } from "../protocol/index.ts";
import { canonicalJson } from "./canonical.ts";
import type { RunStore } from "./store.ts";

/** How one runner event relates to the stored log. */
export type AppendDisposition =
  | { kind: "accepted"; state: ProducerState }
  | { kind: "duplicate" }
  | { kind: "conflict"; sourceSeq: number }
  | { kind: "gap"; expected: number }
  | { kind: "stale_epoch"; epoch: number };

/**
 * Classifies an incoming runner event with the log core's producer verdict. A sourceSeq already
 * stored is a duplicate only if its content is identical; otherwise it is a conflict.
 */
export function classify(store: RunStore, epoch: number, event: RunnerEvent): AppendDisposition {
  const verdict = store.judgeRunner(epoch, event.sourceSeq);
  switch (verdict.kind) {
    case "accepted":
      return { kind: "accepted", state: verdict.state };
    case "gap":
      return { kind: "gap", expected: verdict.expected };
    case "stale_epoch":
      return { kind: "stale_epoch", epoch: verdict.current };
    case "bad_epoch_start":
      // Runner epochs are opened only by claims, so a runner can never raise its own.
      return { kind: "stale_epoch", epoch };
    case "duplicate": {
      const stored = store.runnerEvent(event.sourceSeq);
      const same =
        stored !== null && stored.type === event.type && canonicalJson(stored.data) === canonicalJson(event.data ?? null);
      return same ? { kind: "duplicate" } : { kind: "conflict", sourceSeq: event.sourceSeq };
    }
  }
}
