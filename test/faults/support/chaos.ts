import type { TestProxy } from "../../support/proxy.ts";
import type { FaultRandom } from "./seed.ts";

export interface Chaos {
  /** Connections cut so far. */
  readonly cuts: number;
  /** Rounds of cutting so far. */
  readonly rounds: number;
  stop(): Promise<void>;
}

export interface ChaosOptions {
  minMs: number;
  maxMs: number;
  probability: number;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A flapping network: every `minMs`–`maxMs` (seeded), each connection open through the proxy is
 * cut with probability `probability`.
 */
export function startChaos(
  proxy: TestProxy,
  random: FaultRandom,
  options: ChaosOptions = { minMs: 50, maxMs: 500, probability: 0.5 },
): Chaos {
  let stopped = false;
  const state = { cuts: 0, rounds: 0 };
  const loop = (async () => {
    while (!stopped) {
      await sleep(random.int(options.minMs, options.maxMs));
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
