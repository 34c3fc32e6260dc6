import type { RunnerEvent } from "../protocol/index.ts";
import { canonicalJson } from "./canonical.ts";
import type { RunStore } from "./store.ts";

/** How one runner event relates to the stored log. */
export type AppendDisposition =
  | { kind: "accepted" }
  | { kind: "duplicate" }
  | { kind: "conflict"; sourceSeq: number }
  | { kind: "gap"; expected: number };

/**
 * Classifies an incoming runner event against the log whose highest stored sourceSeq is `highest`.
 * Stored sourceSeqs are always 1..highest with no holes, because nothing past a gap is stored.
 */
export function classify(store: RunStore, event: RunnerEvent, highest: number): AppendDisposition {
  if (event.sourceSeq === highest + 1) return { kind: "accepted" };
  if (event.sourceSeq > highest + 1) return { kind: "gap", expected: highest + 1 };
  const stored = store.runnerEvent(event.sourceSeq);
  const same =
    stored !== null &&
    stored.type === event.type &&
    canonicalJson(stored.data) === canonicalJson(event.data ?? null);
  return same ? { kind: "duplicate" } : { kind: "conflict", sourceSeq: event.sourceSeq };
}
