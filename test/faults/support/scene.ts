import { afterEach } from "vitest";
import { type ProxyOptions, startProxy, type TestProxy } from "../../support/proxy.ts";
import { type Chaos, type ChaosOptions, startChaos } from "./chaos.ts";
import type { RawRunner } from "./raw-runner.ts";
import type { FaultRandom } from "./seed.ts";
import { ReconnectingViewer, type ViewerOptions } from "./viewer.ts";

/** What a fault test opens, each closed after the test, the last opened first. */
export interface FaultScene {
  /** A proxy before the edge: the network that faults are made in. */
  proxy(port: number, options?: ProxyOptions): Promise<TestProxy>;
  /** Rounds of random cuts on the proxy; a test may stop them earlier. */
  chaos(proxy: TestProxy, random: FaultRandom, options?: ChaosOptions): Chaos;
  /** A reconnecting viewer, not yet started. */
  viewer(options: ViewerOptions): ReconnectingViewer;
  /** A runner the test claimed by hand. */
  runner(runner: RawRunner): RawRunner;
}

export function useFaultScene(): FaultScene {
  const closers: Array<() => unknown> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  const opened = <T>(thing: T, close: (thing: T) => unknown): T => {
    closers.push(() => close(thing));
    return thing;
  };
  return {
    proxy: async (port, options) => opened(await startProxy(port, options), (proxy) => proxy.close()),
    chaos: (proxy, random, options) => opened(startChaos(proxy, random, options), (chaos) => chaos.stop()),
    viewer: (options) => opened(new ReconnectingViewer(options), (viewer) => viewer.stop()),
    runner: (runner) => opened(runner, (r) => r.close()),
  };
}
