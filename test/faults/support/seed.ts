/**
 * Seeded randomness for the fault suites. Every random choice a suite makes (where to crash, when
 * to cut, in which order faults come) is drawn from one seed: `FAULT_SEED` when it is set, else a
 * fresh one. The seed is printed when the suite starts and put in front of any failure's message,
 * so a failing run can be replayed with `FAULT_SEED=<seed>`. Real processes keep their own timing,
 * so a replay repeats the choices, not every interleaving.
 */
export interface FaultRandom {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  shuffle<T>(items: T[]): T[];
}

export function faultRandom(suite: string): FaultRandom {
  const given = process.env.FAULT_SEED;
  const seed = given ? Number(given) >>> 0 : Math.floor(Math.random() * 2 ** 32) >>> 0;
  console.log(`[faults] ${suite}: FAULT_SEED=${seed}${given ? " (from the environment)" : ""}`);
  const next = mulberry32(seed);
  const random: FaultRandom = {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    shuffle<T>(items: T[]): T[] {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [out[i], out[j]] = [out[j] as T, out[i] as T];
      }
      return out;
    },
  };
  return random;
}

/** Runs a suite's body; a failure's message starts with the seed and the command that replays it. */
export async function replayable<T>(random: FaultRandom, file: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof Error) {
      error.message = `[FAULT_SEED=${random.seed}; replay: FAULT_SEED=${random.seed} npx vitest run --project faults ${file}] ${error.message}`;
    }
    throw error;
  }
}

/** A small, well-mixed 32-bit generator: the same seed gives the same sequence everywhere. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
