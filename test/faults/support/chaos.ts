import type { CutProxy } from "../../bridge/harness/proxy.ts";
import type { FaultRandom } from "./seed.ts";

export interface Chaos {
  /** Connections cut so far. */
  readonly cuts: number;
  /** Rounds of cutting so far. */
  readonly rounds: number;
  stop(): Promise<void>;
}

/**
 * A flapping network: every `minMs`–`maxMs` (seeded), each connection open through the proxy is
 * cut with probability `probability`.
 */
export function startChaos(
  proxy: CutProxy,
  random: FaultRandom,
  options: { minMs: number; maxMs: number; probability: number } = { minMs: 50, maxMs: 500, probability: 0.5 },
): Chaos {
  let stopped = false;
  const state = { cuts: 0, rounds: 0 };
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, random.int(options.minMs, options.maxMs)));
      if (stopped) return;
      state.cuts += proxy.cutEach(() => random.chance(options.probability));
      state.rounds++;
    }
  })();
  return {
    get cuts() {
      return state.cuts;
    },
    get rounds() {
      return state.rounds;
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
