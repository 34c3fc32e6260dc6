/**
 * Prints a suite's figures on one line, in the form docs/RELIABILITY.md quotes them, so the
 * numbers of the last run can be copied from the test output (`grep "fault figures"`).
 */
export function reportFigures(suite: string, seed: number | null, figures: Record<string, number | string>): void {
  const list = Object.entries(figures)
    .map(([name, value]) => `${name}: ${value}`)
    .join(", ");
  console.log(`[fault figures] ${suite}${seed === null ? "" : ` (seed ${seed})`}: ${list}`);
}
