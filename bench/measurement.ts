/** What a measurement is: rows it reports and one pass on one target. */
import type { Target } from "./targets.ts";

export interface Row {
  key: string;
  label: string;
  unit: string;
  higherIsBetter: boolean;
}

export interface Measurement {
  /** For `--only`: baseline, single, batched, catchup, latency, ingest, viewers, runs. */
  id: string;
  title: string;
  rows: Row[];
  /** Only our targets (runs, viewers): the reference has no runs. */
  oursOnly?: boolean;
  /** Fewer rounds for the long scale passes (1,000 viewers, 1,000 runs). */
  maxRounds?: number;
  /** A whole pass on one target; `scale` < 1 for the warm-up. Returns a value per row key. */
  run(target: Target, scale: number): Promise<Record<string, number>>;
}

export function count(n: number, scale: number): number {
  return Math.max(1, Math.round(n * scale));
}
