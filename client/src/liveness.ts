import { isTerminal } from "../../src/protocol/index.ts";
import type { EdgeClient } from "./calls.ts";

export interface Liveness {
  /** A new connection starts: what was owed to the old one is forgotten. */
  reset(): void;
  stop(): void;
}

/**
 * The viewer socket is silent while the run is, so a dead connection (a laptop that slept, a NAT
 * that forgot it) looks just like an idle one. Every `everyMs` this asks over HTTP how far the log
 * has got; if the socket has still not delivered that far by the next look (or the run had ended
 * and no `end` frame came), the socket is dead and `onStale` drops it.
 */
export function watchLiveness(
  client: EdgeClient,
  runId: string,
  everyMs: number,
  seen: () => number,
  onStale: (reason: string) => void,
): Liveness {
  let owed: { seq: number; ended: boolean } | null = null;
  let generation = 0;
  let busy = false;
  const look = async () => {
    if (owed && (seen() < owed.seq || owed.ended)) {
      const reason = owed.ended
        ? `the run ended but no end frame came within ${everyMs} ms`
        : `the log is at seq ${owed.seq} but the socket stopped at ${seen()}`;
      owed = null;
      onStale(reason);
      return;
    }
    const asked = generation;
    try {
      const run = await client.getRun(runId, { timeoutMs: everyMs });
      if (asked !== generation) return;
      const ended = isTerminal(run.status);
      owed = run.lastSeq > seen() || ended ? { seq: run.lastSeq, ended } : null;
    } catch {
      // No answer says nothing about the socket; if it is dead too, its close or the next look tells.
      owed = null;
    }
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void look().finally(() => (busy = false));
  }, everyMs);
  // Node only: a watch alone must not keep the process alive past its caller.
  (timer as { unref?: () => void }).unref?.();
  return {
    reset() {
      generation++;
      owed = null;
    },
    stop: () => clearInterval(timer),
  };
}
