/**
 * Runs every measurement: a warm-up pass on each target (discarded), then `rounds` rounds in
 * which the targets take turns, the order rotating each round so machine noise lands on all.
 */
import type { Measurement } from "./measurement.ts";
import { fmt, type Results } from "./report.ts";
import type { Target } from "./targets.ts";

export async function runRounds(measurements: Measurement[], all: Target[], rounds: number): Promise<Results> {
  const results: Results = new Map(); // row key → target → samples
  for (const m of measurements) {
    const targets = all.filter((t) => t.ours || !m.oursOnly);
    if (targets.length === 0) continue;
    console.log(`\n${m.title}`);
    for (const t of targets) await m.run(t, 0.1); // warm-up, discarded
    for (let round = 0; round < Math.min(rounds, m.maxRounds ?? rounds); round++) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const t of order) {
        const values = await m.run(t, 1);
        for (const row of m.rows) {
          const value = values[row.key];
          if (value === undefined) continue;
          const byTarget = results.get(row.key) ?? new Map<string, number[]>();
          results.set(row.key, byTarget);
          const samples = byTarget.get(t.name) ?? [];
          byTarget.set(t.name, samples);
          samples.push(value);
        }
        const summary = m.rows.map((row) => `${fmt(values[row.key])} ${row.unit}`).join(", ");
        console.log(`  round ${round + 1} ${t.name.padEnd(8)} ${summary}`);
      }
    }
  }
  return results;
}
